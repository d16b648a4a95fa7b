/// Where two sequences first differ, as a short sentence, or nil when they are equal.
/// Tests compare long audio buffers with this rather than with `==`, so that a failure says
/// where the audio went wrong instead of printing a million samples.
public func firstDifference<T: Equatable>(_ actual: [T], _ expected: [T]) -> String? {
    if let i = (0..<min(actual.count, expected.count)).first(where: { actual[$0] != expected[$0] }) {
        return "first difference at index \(i): \(actual[i]) instead of \(expected[i])"
    }
    if actual.count != expected.count {
        return "\(actual.count) elements instead of \(expected.count)"
    }
    return nil
}
