import StageboxRealtime

/// An immutable, ready-to-run form of the bus graph, built off the audio thread.
///
/// Nodes come in processing order: every port after all the ports that feed it.
/// A snapshot built for a graph change fades the connections that come and go over one
/// period and names the steady snapshot that follows as its successor.
final class GraphSnapshot: ChainedSnapshot, @unchecked Sendable {
    typealias Input = PortInput

    struct Node {
        let port: Port
        let inputs: [PortInput]
        /// False for a sender that rests while no connection takes its output: nothing reads
        /// its buffer, and its meter's RMS reads silence (its peak holds what it held).
        let runs: Bool
        /// One input that carries every channel of the port one to one at unity gain: the mix
        /// is that input's copy, made in one pass instead of clearing, adding and (a receiver)
        /// clamping in three. Decided off the audio thread.
        let copiesItsInput: Bool

        init(port: Port, inputs: [PortInput], runs: Bool) {
            self.port = port
            self.inputs = inputs
            self.runs = runs
            copiesItsInput = inputs.count == 1 && inputs[0].isWholeUnityCopy(into: port.descriptor.channels)
        }
    }

    let nodes: [Node]
    let successor: GraphSnapshot?
    /// The graph this snapshot plays (for a steady one), what the next change starts from.
    let ports: [Port]
    let edges: [Connection]

    init(nodes: [Node], successor: GraphSnapshot?, ports: [Port], edges: [Connection]) {
        self.nodes = nodes
        self.successor = successor
        self.ports = ports
        self.edges = edges
    }

    /// Audio side: runs one period through the graph.
    ///
    /// Index loops rather than `for … in`: an unoptimised build iterates arrays through a
    /// read coroutine whose frame is heap-allocated, and the audio thread must not allocate.
    /// `metering`: whether the ports' meters are measured (someone reads them).
    @inline(__always)
    func run(frames: Int, cycle: CycleInfo, metering: Bool) {
        for n in 0..<nodes.count {
            let node = nodes[n]
            guard node.runs else {
                if metering { node.port.meter.measureSilence() }
                continue
            }
            let port = node.port
            let buffer = port.buffer
            switch port.descriptor.kind {
            case .sender:
                port.processor?.process(buffer, frames: frames, cycle: cycle)
            case .filter:
                let inputs = node.inputs
                if node.copiesItsInput {
                    inputs[0].copy(into: buffer, frames: frames)
                } else {
                    buffer.clear(frames: frames)
                    for i in 0..<inputs.count { inputs[i].mix(into: buffer, frames: frames) }
                }
                // An unconnected filter is left out of the signal path.
                if !inputs.isEmpty { port.processor?.process(buffer, frames: frames, cycle: cycle) }
            case .receiver:
                // A receiver takes the mix as it leaves the bus: clamped, then muted (a mute's
                // gain, 0 to 1, keeps it in range). A copied input is clamped as it is copied.
                let inputs = node.inputs
                if node.copiesItsInput {
                    inputs[0].copyClamped(into: buffer, frames: frames)
                } else {
                    buffer.clear(frames: frames)
                    for i in 0..<inputs.count { inputs[i].mix(into: buffer, frames: frames) }
                    buffer.clamp(frames: frames)
                }
            }
            port.applyMute(frames: frames)
            if port.descriptor.kind == .receiver {
                if let separate = port.separateInputs {
                    separate.process(inputs: node.inputs, frames: frames, cycle: cycle)
                } else {
                    port.processor?.process(buffer, frames: frames, cycle: cycle)
                }
            }
            if metering { port.meter.measure(buffer, frames: frames) }
        }
    }
}

/// Builds snapshots from the control side's picture of the graph.
enum GraphPlanner {
    /// Orders `ports` so that every port comes after the ports that feed it.
    /// `ports` is in creation order, which breaks ties so the order is stable.
    static func processingOrder(ports: [Port], edges: [Connection]) -> [Port]? {
        var indegree = [String: Int]()
        var outgoing = [String: [String]]()
        for p in ports { indegree[p.descriptor.name] = 0 }
        for e in edges {
            indegree[e.to, default: 0] += 1
            outgoing[e.from, default: []].append(e.to)
        }
        var ready = ports.filter { indegree[$0.descriptor.name] == 0 }
        let byName = Dictionary(uniqueKeysWithValues: ports.map { ($0.descriptor.name, $0) })
        var order: [Port] = []
        while !ready.isEmpty {
            let p = ready.removeFirst()
            order.append(p)
            for next in outgoing[p.descriptor.name] ?? [] {
                indegree[next]! -= 1
                if indegree[next] == 0, let port = byName[next] { ready.append(port) }
            }
        }
        return order.count == ports.count ? order : nil
    }

    /// A snapshot of `edges` over `ports`, with per-edge gains (1 → 1 unless `fades` says else).
    static func snapshot(ports: [Port], edges: [Connection], fades: [Connection: (Float, Float)] = [:],
                         successor: GraphSnapshot? = nil) -> GraphSnapshot {
        let order = processingOrder(ports: ports, edges: edges) ?? ports
        let byName = Dictionary(uniqueKeysWithValues: ports.map { ($0.descriptor.name, $0) })
        let heard = Set(edges.map(\.from))
        let nodes = order.map { port in
            let inputs = edges.filter { $0.to == port.descriptor.name }.compactMap { e -> GraphSnapshot.Input? in
                guard let source = byName[e.from],
                      let route = ChannelRoute(source: source.descriptor, channel: e.fromChannel,
                                               destination: port.descriptor, channel: e.toChannel)
                else { return nil }
                let (start, end) = fades[e] ?? (1, 1)
                return .init(source: source, route: route, startGain: start, endGain: end)
            }
            let rests = port.descriptor.kind == .sender && !heard.contains(port.descriptor.name)
                && port.processor?.restsWhenUnheard == true
            return GraphSnapshot.Node(port: port, inputs: inputs, runs: !rests)
        }
        return GraphSnapshot(nodes: nodes, successor: successor, ports: ports, edges: edges)
    }

    /// The snapshot for a change from (`oldPorts`, `oldEdges`) to (`newPorts`, `newEdges`):
    /// one period in which removed connections fade out and new ones fade in, then the new graph.
    static func transition(oldPorts: [Port], oldEdges: [Connection],
                           newPorts: [Port], newEdges: [Connection]) -> GraphSnapshot {
        let steady = snapshot(ports: newPorts, edges: newEdges)
        let oldSet = Set(oldEdges), newSet = Set(newEdges)
        if oldSet == newSet && oldPorts.map(\.descriptor.name) == newPorts.map(\.descriptor.name) {
            return steady
        }
        var fades: [Connection: (Float, Float)] = [:]
        for e in newSet.subtracting(oldSet) { fades[e] = (0, 1) }
        for e in oldSet.subtracting(newSet) { fades[e] = (1, 0) }
        var ports = oldPorts
        for p in newPorts where !ports.contains(where: { $0 === p }) { ports.append(p) }
        // The new graph's order first, then what fades out: a receiver that takes its sources
        // separately keeps each source in the same place through the change.
        let edges = newEdges + oldEdges.filter { !newSet.contains($0) }
        return snapshot(ports: ports, edges: edges, fades: fades, successor: steady)
    }
}
