import StageboxEngine

/// The interleaved integer and float formats a codec may use, and their conversion to and
/// from the engine's Float32.
///
/// Scaling: an n-bit integer maps to Float32 by dividing by 2^(n-1), so 16- and 24-bit values
/// are exact in Float32 and convert back bit for bit at unity gain. S32 keeps its top 24 bits
/// (Float32 has 24 bits of mantissa); its lowest 8 bits are dropped on the way in.
public enum SampleFormat: String, Sendable, CaseIterable, Codable {
    case s16 = "S16_LE"
    /// 24 bits in the low three bytes of a 32-bit container.
    case s24 = "S24_LE"
    /// 24 bits packed in three bytes.
    case s24Packed = "S24_3LE"
    case s32 = "S32_LE"
    case float = "FLOAT_LE"

    /// Bytes one sample takes in memory.
    public var bytesPerSample: Int {
        switch self {
        case .s16: return 2
        case .s24Packed: return 3
        case .s24, .s32, .float: return 4
        }
    }

    /// Decodes `frames` samples that start at `source` and are `stride` bytes apart into `destination`.
    @inline(__always)
    public func decode(_ source: UnsafeRawPointer, stride: Int, into destination: UnsafeMutablePointer<Float>,
                       frames: Int) {
        switch self {
        case .s16:
            for i in 0..<frames {
                let v = Int16(littleEndian: source.loadUnaligned(fromByteOffset: i * stride, as: Int16.self))
                destination[i] = Self.fromS16(v)
            }
        case .s24:
            for i in 0..<frames {
                let raw = Int32(littleEndian: source.loadUnaligned(fromByteOffset: i * stride, as: Int32.self))
                destination[i] = Self.fromS24(raw)
            }
        case .s24Packed:
            for i in 0..<frames {
                let p = source + i * stride
                let raw = Int32(p.load(as: UInt8.self)) | Int32(p.load(fromByteOffset: 1, as: UInt8.self)) << 8
                    | Int32(p.load(fromByteOffset: 2, as: UInt8.self)) << 16
                destination[i] = Self.fromS24(raw)
            }
        case .s32:
            for i in 0..<frames {
                let v = Int32(littleEndian: source.loadUnaligned(fromByteOffset: i * stride, as: Int32.self))
                destination[i] = Self.fromS32(v)
            }
        case .float:
            for i in 0..<frames {
                let bits = UInt32(littleEndian: source.loadUnaligned(fromByteOffset: i * stride, as: UInt32.self))
                destination[i] = Float(bitPattern: bits)
            }
        }
    }

    /// Encodes `frames` samples from `source` into memory at `destination`, `stride` bytes apart,
    /// clamping to [-1, 1] (NaN becomes silence) and rounding to the nearest integer, ties to
    /// even. No branch and no call a sample: rounding with `rounded()` is a libm call on
    /// x86_64's baseline CPU (rintf), one a sample, and dearer still under emulation.
    @inline(__always)
    public func encode(_ source: UnsafePointer<Float>, frames: Int, into destination: UnsafeMutableRawPointer,
                       stride: Int) {
        switch self {
        case .s16:
            for i in 0..<frames {
                destination.storeBytes(of: Self.toS16(source[i]).littleEndian, toByteOffset: i * stride, as: Int16.self)
            }
        case .s24:
            for i in 0..<frames {
                destination.storeBytes(of: Self.toS24(source[i]).littleEndian, toByteOffset: i * stride, as: Int32.self)
            }
        case .s24Packed:
            for i in 0..<frames {
                let v = Self.toS24(source[i])
                let p = destination + i * stride
                p.storeBytes(of: UInt8(truncatingIfNeeded: v), as: UInt8.self)
                p.storeBytes(of: UInt8(truncatingIfNeeded: v >> 8), toByteOffset: 1, as: UInt8.self)
                p.storeBytes(of: UInt8(truncatingIfNeeded: v >> 16), toByteOffset: 2, as: UInt8.self)
            }
        case .s32:
            for i in 0..<frames {
                destination.storeBytes(of: Self.toS32(source[i]).littleEndian, toByteOffset: i * stride, as: Int32.self)
            }
        case .float:
            for i in 0..<frames {
                let clamped = AudioBuffer.clamped(source[i])
                destination.storeBytes(of: clamped.bitPattern.littleEndian, toByteOffset: i * stride,
                                       as: UInt32.self)
            }
        }
    }

    /// Decodes `frames` interleaved stereo frames at `source` (left, right, left, ...) into two
    /// channels: what `decode` does channel by channel, in one pass. Unlike a pass with a
    /// stride, this pass the compiler vectorizes, de-interleaving with shuffles (`ld2` on
    /// aarch64). `source` is aligned for the format (ALSA's mmap areas are); packed 24-bit
    /// takes the per-channel passes. The index is `2 &* i`: an overflow check, a branch to a
    /// trap inside the loop, keeps the compiler from vectorizing it (and `i` < `frames`).
    @inline(__always)
    public func decodeStereo(_ source: UnsafeRawPointer, into left: UnsafeMutablePointer<Float>,
                             _ right: UnsafeMutablePointer<Float>, frames: Int) {
        switch self {
        case .s16:
            let p = source.assumingMemoryBound(to: Int16.self)
            for i in 0..<frames {
                left[i] = Self.fromS16(Int16(littleEndian: p[2 &* i]))
                right[i] = Self.fromS16(Int16(littleEndian: p[2 &* i &+ 1]))
            }
        case .s24:
            let p = source.assumingMemoryBound(to: Int32.self)
            for i in 0..<frames {
                left[i] = Self.fromS24(Int32(littleEndian: p[2 &* i]))
                right[i] = Self.fromS24(Int32(littleEndian: p[2 &* i &+ 1]))
            }
        case .s32:
            let p = source.assumingMemoryBound(to: Int32.self)
            for i in 0..<frames {
                left[i] = Self.fromS32(Int32(littleEndian: p[2 &* i]))
                right[i] = Self.fromS32(Int32(littleEndian: p[2 &* i &+ 1]))
            }
        case .float:
            let p = source.assumingMemoryBound(to: UInt32.self)
            for i in 0..<frames {
                left[i] = Float(bitPattern: UInt32(littleEndian: p[2 &* i]))
                right[i] = Float(bitPattern: UInt32(littleEndian: p[2 &* i &+ 1]))
            }
        case .s24Packed:
            decode(source, stride: 6, into: left, frames: frames)
            decode(source + 3, stride: 6, into: right, frames: frames)
        }
    }

    /// Encodes two channels into `frames` interleaved stereo frames at `destination`: what
    /// `encode` does channel by channel, in one pass the compiler vectorizes (see `decodeStereo`).
    @inline(__always)
    public func encodeStereo(_ left: UnsafePointer<Float>, _ right: UnsafePointer<Float>, frames: Int,
                             into destination: UnsafeMutableRawPointer) {
        switch self {
        case .s16:
            let p = destination.assumingMemoryBound(to: Int16.self)
            for i in 0..<frames {
                p[2 &* i] = Self.toS16(left[i]).littleEndian
                p[2 &* i &+ 1] = Self.toS16(right[i]).littleEndian
            }
        case .s24:
            let p = destination.assumingMemoryBound(to: Int32.self)
            for i in 0..<frames {
                p[2 &* i] = Self.toS24(left[i]).littleEndian
                p[2 &* i &+ 1] = Self.toS24(right[i]).littleEndian
            }
        case .s32:
            let p = destination.assumingMemoryBound(to: Int32.self)
            for i in 0..<frames {
                p[2 &* i] = Self.toS32(left[i]).littleEndian
                p[2 &* i &+ 1] = Self.toS32(right[i]).littleEndian
            }
        case .float:
            let p = destination.assumingMemoryBound(to: UInt32.self)
            for i in 0..<frames {
                p[2 &* i] = AudioBuffer.clamped(left[i]).bitPattern.littleEndian
                p[2 &* i &+ 1] = AudioBuffer.clamped(right[i]).bitPattern.littleEndian
            }
        case .s24Packed:
            encode(left, frames: frames, into: destination, stride: 6)
            encode(right, frames: frames, into: destination + 3, stride: 6)
        }
    }

    // One sample each way, shared by the strided and the stereo passes.

    /// A 16-bit sample as a Float.
    @inline(__always) static func fromS16(_ v: Int16) -> Float { Float(v) * (1 / 32768) }
    /// A 24-bit sample in the low three bytes of `raw`, sign-extended from bit 23 (the top byte,
    /// a container's, is ignored).
    @inline(__always) static func fromS24(_ raw: Int32) -> Float { Float((raw << 8) >> 8) * (1 / 8_388_608) }
    /// A 32-bit sample's top 24 bits (Float32 holds no more).
    @inline(__always) static func fromS32(_ v: Int32) -> Float { Float(v >> 8) * (1 / 8_388_608) }
    /// `x` as a 16-bit sample: clamped, rounded to nearest, ties to even. In Float alone, the
    /// way `rounded` does it in Double: x × 2^15 is exact, and adding 1.5 × 2^23 to a Float of
    /// magnitude at most 2^15 leaves the integer it rounds to in the low bits of the sum's
    /// mantissa, its pattern 0x4B40_0000 plus that integer. Half the conversions of the Double
    /// way, each an emulated helper where no FPU is (qemu's TCG).
    @inline(__always) static func toS16(_ x: Float) -> Int16 {
        let shifted = AudioBuffer.clamped(x) * 32768 + 12_582_912
        let value = Int32(bitPattern: shifted.bitPattern) &- 0x4B40_0000
        return Int16(truncatingIfNeeded: Swift.min(value, 32767))
    }
    /// `x` as a 24-bit sample.
    @inline(__always) static func toS24(_ x: Float) -> Int32 { Swift.min(rounded(x, by: 8_388_608), 8_388_607) }
    /// `x` as a 32-bit sample: its 24-bit value in the top three bytes.
    @inline(__always) static func toS32(_ x: Float) -> Int32 { toS24(x) &<< 8 }

    /// `x` clamped to [-1, 1] (NaN as 0) times `scale` (at most 2^23), rounded to the nearest
    /// integer, ties to even. Adding 1.5 × 2^52 to a Double of magnitude below 2^51 leaves the
    /// integer it rounds to in the low bits of the sum's mantissa (the CPU's rounding: to
    /// nearest, ties to even), read back as the low 32 bits of its pattern.
    @inline(__always)
    static func rounded(_ x: Float, by scale: Double) -> Int32 {
        let shifted = Double(AudioBuffer.clamped(x)) * scale + 6_755_399_441_055_744
        return Int32(truncatingIfNeeded: shifted.bitPattern)
    }
}
