// The standard library of Swift 6.0 (Debian's swiftlang 6.0.3, the aarch64 cross compiler)
// declares Array.withUnsafe(Mutable)BufferPointer `rethrows`, so a closure's typed error comes
// out as `any Error`; 6.1 made them keep the type. These keep it with either compiler, so one
// code base builds with both (tools/build-static --target aarch64 uses 6.0.3).

extension Array {
    /// `withUnsafeBufferPointer`, throwing the closure's own error type.
    @inlinable
    public func withBuffer<Result, Failure: Error>(
        _ body: (UnsafeBufferPointer<Element>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var outcome: Swift.Result<Result, Failure>?
        withUnsafeBufferPointer { buffer in
            do throws(Failure) { outcome = .success(try body(buffer)) } catch { outcome = .failure(error) }
        }
        return try outcome!.get()
    }

    /// `withUnsafeMutableBufferPointer`, throwing the closure's own error type.
    @inlinable
    public mutating func withMutableBuffer<Result, Failure: Error>(
        _ body: (UnsafeMutableBufferPointer<Element>) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        var outcome: Swift.Result<Result, Failure>?
        withUnsafeMutableBufferPointer { buffer in
            do throws(Failure) { outcome = .success(try body(buffer)) } catch { outcome = .failure(error) }
        }
        return try outcome!.get()
    }
}
