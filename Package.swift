// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Stagebox",
    products: [
        .executable(name: "stagebox", targets: ["stagebox"]),
        // The C client library: include/stagebox_client.h, linked as -lStageboxClientC.
        .library(name: "StageboxClientC", type: .dynamic, targets: ["StageboxClientC"]),
        // The ALSA PCM plugin `type stagebox` (libasound_module_pcm_stagebox.so): every ALSA
        // program on the bus. tools/setup installs it where alsa-lib looks for plugins.
        .library(name: "asound_module_pcm_stagebox", type: .dynamic, targets: ["StageboxALSAPlugin"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1"),
        .package(url: "https://github.com/apple/swift-atomics", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // System libraries: alsa-lib, libgpiod 1.6, libsndfile.
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        // Linux calls Swift cannot reach directly: ppoll, memfd_create, SCM_RIGHTS, SO_PEERCRED.
        .systemLibrary(name: "CLinux"),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate", providers: [.apt(["libsamplerate0-dev"])]),

        // Descriptors, errors (an errno in words with what failed and where), Unix-socket
        // addresses over swift-system; threads, clocks, semaphores and the wakeup: for every
        // module that makes system calls.
        .target(name: "StageboxSystem", dependencies: [
            "CLinux", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // What only the audio thread and its peers need: lock-free queues and rings, snapshot
        // exchange, and making a thread real-time.
        .target(name: "StageboxRealtime", dependencies: [
            "CLinux", "StageboxSystem", .product(name: "SystemPackage", package: "swift-system"),
            .product(name: "Atomics", package: "swift-atomics"),
        ]),
        // Numbers and table columns as text, for the console, the commands and the logs.
        .target(name: "StageboxFormatting"),
        // What a port may be called and how wide it may be, and `PORT:CHANNEL`: the one definition
        // the engine, the bus server, the rings and the configuration check against.
        .target(name: "StageboxPortRules"),
        // Triggers: named actions with a state that buttons, MIDI, the console and clients fire;
        // their names' rules, their board, and the debounce and long-press machine of a button.
        .target(name: "StageboxTriggers", dependencies: ["StageboxPortRules"]),
        // The TOML configuration: model, defaults, validation with FILE:LINE errors.
        .target(name: "StageboxConfig", dependencies: [
            "StageboxProtocol", "StageboxPortRules", "StageboxTriggers", "StageboxSystem", .product(name: "TOMLKit", package: "TOMLKit"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The engine: ports, connections, graph snapshots, mixing; processes one period.
        .target(name: "StageboxEngine", dependencies: [
            "StageboxRealtime", "StageboxPortRules", .product(name: "Atomics", package: "swift-atomics"),
            .product(name: "OrderedCollections", package: "swift-collections"),
        ]),
        // Audio files through libsndfile (WAV, FLAC, AIFF, …), rates converted with libsamplerate.
        .target(name: "StageboxAudioFiles", dependencies: ["CSndFile", "CSampleRate"]),
        // Drivers around the engine: ALSA mmap codec loop, offline (WAV) and simulated board.
        .target(name: "StageboxDrivers", dependencies: [
            "CALSA", "StageboxEngine", "StageboxRealtime", "StageboxAudioFiles", "StageboxFormatting", "StageboxSystem",
            .product(name: "Logging", package: "swift-log"), .product(name: "Atomics", package: "swift-atomics"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The bus protocol shared by server and clients: messages, framing, shared-memory rings.
        .target(name: "StageboxProtocol", dependencies: [
            "CLinux", "StageboxSystem", "StageboxPortRules", "StageboxTriggers", .product(name: "Atomics", package: "swift-atomics"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The server side of the client bus: client ports on the audio thread.
        .target(name: "StageboxBusServer", dependencies: [
            "StageboxEngine", "StageboxProtocol", "StageboxTriggers", "StageboxSystem", "StageboxPortRules", "CLinux",
            .product(name: "Logging", package: "swift-log"), .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The client library (Swift): usable without the rest of Stagebox.
        .target(name: "StageboxClient", dependencies: [
            "StageboxProtocol", "StageboxPortRules", "StageboxTriggers", "StageboxSystem", "CLinux", "CSampleRate", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The C client library's implementation (the header is include/stagebox_client.h).
        .target(name: "StageboxClientC", dependencies: ["StageboxClient", "StageboxTriggers", "StageboxPortRules"]),
        // The ALSA plugin's entry point (C, on alsa-lib's ioplug API) over the C client library
        // (its include/ links to the library's header).
        .target(name: "StageboxALSAPlugin", dependencies: ["StageboxClientC", "CALSA"],
                exclude: ["50-stagebox.conf"], // the `pcm.stagebox` definition tools/setup installs
                // PIC: alsa-lib's plugin macros then export the versioned entry point dlopen checks.
                cSettings: [.define("PIC")]),
        // Takes: one WAV per source from the audio thread's rings, written to survive a power cut.
        .target(name: "StageboxRecorder", dependencies: [
            "CLinux", "StageboxEngine", "StageboxRealtime", "StageboxSystem", "StageboxAudioFiles",
            .product(name: "Logging", package: "swift-log"), .product(name: "DequeModule", package: "swift-collections"), .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The hardware of the controls: GPIO buttons and LEDs (libgpiod 1.6).
        .target(name: "StageboxControls", dependencies: [
            "CGPIOD", "CLinux", "StageboxSystem", "StageboxTriggers", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The ALSA sequencer client "Stagebox": notes and controllers fire triggers, their
        // states go back out as notes and controllers (a controller's pad LEDs).
        .target(name: "StageboxMIDI", dependencies: [
            "CALSA", "CLinux", "StageboxTriggers", "StageboxSystem",
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The board's health: under-voltage, throttling, heat, the CPU's clock, the busiest
        // other process; read from sysfs and procfs on a thread of its own.
        .target(name: "StageboxHealth", dependencies: [
            "StageboxSystem", .product(name: "DequeModule", package: "swift-collections"),
        ]),
        // USB sticks: the kernel's device events heard, a plugged stick checked and mounted
        // under /media, a pulled one let go.
        .target(name: "StageboxMedia", dependencies: [
            "CLinux", "StageboxSystem", .product(name: "Logging", package: "swift-log"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The wall clock kept from going backwards across power cuts; whether it can be trusted.
        .target(name: "StageboxClock", dependencies: ["CLinux", "StageboxSystem", .product(name: "SystemPackage", package: "swift-system")]),
        // Support bundles: one text file of everything a helper asks for, secrets removed.
        .target(name: "StageboxDiagnostics", dependencies: ["StageboxSystem"]),
        // The watchdog and the audio lifecycle.
        .target(name: "StageboxWatchdog", dependencies: [
            "CLinux", "StageboxFormatting", "StageboxSystem", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The lifecycle: suspend when idle, never while in use, fades, and what the watchdog is fed on.
        .target(name: "StageboxLifecycle", dependencies: [
            "StageboxDrivers", "StageboxEngine", "StageboxSystem", .product(name: "DequeModule", package: "swift-collections"),
        ]),
        // Stagebox's own log: a bounded queue to a writer thread (nothing that logs waits on the
        // output), and the last lines in memory for the console.
        .target(name: "StageboxLogging", dependencies: [
            "StageboxSystem", .product(name: "Logging", package: "swift-log"),
            .product(name: "DequeModule", package: "swift-collections"), .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The serial console.
        .target(name: "StageboxConsole", dependencies: [
            "StageboxEngine", "StageboxDrivers", "StageboxControls", "StageboxTriggers", "StageboxFormatting", "StageboxSystem",
            .product(name: "SystemPackage", package: "swift-system"), .product(name: "DequeModule", package: "swift-collections"),
        ]),
        // The run-time state (connections, mutes) kept across reboots: the document, its atomic
        // file, and the keeper that hears the engine's changes and restores them.
        .target(name: "StageboxState", dependencies: [
            "StageboxEngine", "StageboxPortRules", "StageboxSystem",
            .product(name: "TOMLKit", package: "TOMLKit"), .product(name: "Logging", package: "swift-log"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // The latency meter: the multi-tone stimulus, the DFT at its tones, the delay, polarity
        // and error bound they give (no I/O), and its two processors on the audio thread.
        .target(name: "StageboxLatency", dependencies: [
            "StageboxEngine", "StageboxRealtime", .product(name: "DequeModule", package: "swift-collections"),
        ]),
        // The running appliance assembled from a configuration: engine, triggers, recorder, state,
        // bus, driver, watchdog, lifecycle, buttons, LEDs, MIDI and the console; `stagebox run`
        // is a thin shell around it, and tests run one in their own process.
        // Updates through RAUC: installing a bundle into the other root slot, marking the
        // running slot good, booting the other slot; run on threads of their own.
        .target(name: "StageboxUpdate", dependencies: [
            "StageboxSystem", .product(name: "Logging", package: "swift-log"),
        ]),
        .target(name: "StageboxAppliance", dependencies: [
            "StageboxDrivers", "StageboxEngine", "StageboxConfig", "StageboxAudioFiles", "StageboxRealtime",
            "StageboxBusServer", "StageboxControls", "StageboxWatchdog", "StageboxConsole", "StageboxLifecycle",
            "StageboxRecorder", "StageboxMIDI", "StageboxLogging", "StageboxFormatting", "StageboxPortRules",
            "StageboxTriggers", "StageboxState", "StageboxSystem", "StageboxUpdate", "StageboxHealth",
            "StageboxDiagnostics", "StageboxMedia", "StageboxClock", .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The command line: `stagebox run` and the tools around it.
        .executableTarget(name: "stagebox", dependencies: [
            "StageboxAppliance", "StageboxDrivers", "StageboxEngine", "StageboxConfig", "StageboxAudioFiles",
            "StageboxBusServer", "StageboxClient", "StageboxProtocol", "StageboxControls", "StageboxWatchdog",
            "StageboxConsole", "StageboxLifecycle", "StageboxLogging", "StageboxFormatting", "StageboxPortRules",
            "StageboxTriggers", "StageboxLatency", "StageboxSystem", "StageboxDiagnostics", "CALSA",
            .product(name: "DequeModule", package: "swift-collections"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),

        // A test program: drives an ALSA PCM with alsa-lib's snd_pcm_* calls (the plugin's tests).
        .executableTarget(name: "pcm-probe", dependencies: ["CALSA"], path: "Tests/PCMProbe"),
        // Helpers shared by the test targets.
        .target(name: "StageboxTestSupport", dependencies: ["CLinux", "StageboxRealtime", "StageboxSystem", "StageboxHealth", "StageboxProtocol"],
                path: "Tests/StageboxTestSupport"),
        .testTarget(name: "StageboxRealtimeTests", dependencies: ["StageboxRealtime", "StageboxSystem"]),
        .testTarget(name: "StageboxFormattingTests", dependencies: ["StageboxFormatting"]),
        .testTarget(name: "StageboxLatencyTests", dependencies: ["StageboxLatency"]),
        .testTarget(name: "StageboxLifecycleTests", dependencies: ["StageboxLifecycle", "StageboxDrivers", "StageboxTestSupport"]),
        .testTarget(name: "StageboxRecorderTests", dependencies: [
            "CLinux", "StageboxRecorder", "StageboxEngine", "StageboxAudioFiles", "StageboxSystem", "StageboxTestSupport", "CSndFile",
            .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "StageboxPortRulesTests", dependencies: ["StageboxPortRules"]),
        .testTarget(name: "StageboxUpdateTests", dependencies: ["StageboxUpdate", "StageboxSystem", "StageboxTestSupport"]),
        .testTarget(name: "StageboxConfigTests", dependencies: ["StageboxConfig"]),
        .testTarget(name: "StageboxTriggersTests", dependencies: ["StageboxTriggers"]),
        .testTarget(name: "StageboxApplianceTests", dependencies: [
            "StageboxAppliance", "StageboxConfig", "StageboxDrivers", "StageboxRecorder", "StageboxClient", "StageboxSystem", "StageboxTestSupport", "StageboxHealth",
            "StageboxTriggers", .product(name: "Logging", package: "swift-log"),
        ]),
        .testTarget(name: "StageboxMIDITests", dependencies: ["StageboxMIDI", "StageboxTriggers", "CALSA"]),
        .testTarget(name: "StageboxControlsTests", dependencies: ["StageboxControls", "StageboxTriggers", "StageboxSystem"]),
        .testTarget(name: "StageboxClockTests", dependencies: ["StageboxClock", "StageboxSystem", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "StageboxDiagnosticsTests", dependencies: ["StageboxDiagnostics", "StageboxSystem", "StageboxTestSupport"]),
        .testTarget(name: "StageboxMediaTests", dependencies: ["StageboxMedia", "StageboxSystem"]),
        .testTarget(name: "StageboxHealthTests", dependencies: ["StageboxHealth", "StageboxSystem", "StageboxTestSupport"]),
        .testTarget(name: "StageboxWatchdogTests", dependencies: ["StageboxWatchdog", "StageboxSystem", "CLinux", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "StageboxEngineTests", dependencies: ["StageboxEngine", "StageboxPortRules", "StageboxTestSupport"]),
        .testTarget(name: "StageboxLoggingTests", dependencies: ["StageboxLogging", "StageboxSystem"]),
        .testTarget(name: "StageboxProtocolTests", dependencies: [
            "StageboxProtocol", "StageboxSystem", "StageboxPortRules", "StageboxTestSupport", .product(name: "SystemPackage", package: "swift-system"),
            .product(name: "Atomics", package: "swift-atomics"),
        ]),
        .testTarget(name: "StageboxSystemTests", dependencies: ["StageboxSystem", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "StageboxALSAPluginTests", dependencies: [
            "StageboxALSAPlugin", "pcm-probe", "stagebox", "StageboxAudioFiles", "StageboxTestSupport",
            "StageboxDrivers", "StageboxEngine",
        ]),
        .testTarget(name: "StageboxStateTests", dependencies: ["StageboxState", "StageboxEngine", "StageboxTestSupport"]),
        .testTarget(name: "StageboxClientTests", dependencies: ["StageboxClient", "StageboxSystem", "StageboxTestSupport"]),
        .testTarget(name: "StageboxAudioFilesTests", dependencies: ["StageboxAudioFiles", "StageboxTestSupport"]),
        .testTarget(name: "StageboxDriversTests", dependencies: [
            "StageboxDrivers", "CALSA", "StageboxAudioFiles", "StageboxSystem", "StageboxTestSupport",
        ]),
        // Counts allocations on the audio thread with a malloc interposer, in a process of its own.
        // Counts lock calls on one thread, by interposing them (for the probe only).
        .target(name: "LockCounter", path: "Tests/LockCounter"),
        .executableTarget(name: "stagebox-allocation-probe", dependencies: [
            "StageboxDrivers", "StageboxEngine", "StageboxRealtime", "StageboxBusServer", "StageboxClient", "StageboxTriggers",
            "StageboxRecorder", "StageboxAudioFiles", "StageboxSystem", "CALSA", "CLinux", "LockCounter",
            .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/AllocationProbe"),
        // A bus client that writes garbage over its own shared memory, for the containment test.
        .executableTarget(name: "stagebox-hostile-client", dependencies: ["StageboxClient", "StageboxSystem"],
                          path: "Tests/HostileClient"),
        // Runs the built `stagebox` binary as a user would.
        .testTarget(name: "StageboxConsoleTests", dependencies: [
            "StageboxConsole", "StageboxEngine", "StageboxTriggers", "StageboxRealtime", "StageboxDrivers", "StageboxSystem", "CLinux",
        ]),
        .testTarget(name: "StageboxBusServerTests", dependencies: [
            "StageboxBusServer", "StageboxClient", "StageboxProtocol", "StageboxDrivers", "StageboxEngine",
            "StageboxTriggers", "StageboxRealtime", "StageboxSystem", "StageboxTestSupport", "StageboxPortRules",
        ]),
        .testTarget(name: "stageboxTests", dependencies: [
            "stagebox", "StageboxAudioFiles", "StageboxClient", "StageboxProtocol", "StageboxRealtime", "StageboxSystem", "StageboxTestSupport", "CLinux",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
