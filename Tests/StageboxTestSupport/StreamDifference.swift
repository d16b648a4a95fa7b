/// Checks a stream that crossed the bus against what was sent, frame by frame, allowing exactly
/// what the bus may do to a stream on a starved machine and nothing else:
/// - silent frames anywhere (the silence before the stream, and a period of silence where the
///   sender's ring ran dry: the bus counts an underrun, and the frames come later, none lost);
/// - when `mayDrop` (the receiver's ring counted overruns: its reader fell behind and the oldest
///   frames made room), frames missing, but never reordered; the last ones too, when the reader
///   was more than a ring behind as the stream ended.
/// Every frame that is not silent must be the next frame sent, bit for bit; without drops the
/// last frame sent must arrive. Returns nil, or a sentence saying where the stream went wrong.
public func streamDifference(received: [Int16], sent: [Int16], channels: Int, mayDrop: Bool) -> String? {
    let receivedFrames = received.count / channels
    let sentFrames = sent.count / channels
    func frame(_ samples: [Int16], _ index: Int) -> ArraySlice<Int16> {
        samples[(index * channels)..<((index + 1) * channels)]
    }
    var next = 0
    var dropped = 0
    for i in 0..<receivedFrames where next < sentFrames {
        let got = frame(received, i)
        if got.allSatisfy({ $0 == 0 }) { continue }
        if got == frame(sent, next) {
            next += 1
            continue
        }
        guard mayDrop, let later = (next + 1..<sentFrames).first(where: { frame(sent, $0) == got }) else {
            return "received frame \(i) is \(Array(got)); frame \(next) sent was \(Array(frame(sent, next)))"
                + (mayDrop ? " and no later frame sent matches it" : " (the receiver counted no overrun)")
        }
        dropped += later - next
        next = later + 1
    }
    if next == 0 {
        return "none of the \(sentFrames) frames sent arrived"
    }
    if next < sentFrames && !mayDrop {
        return "\(next) of \(sentFrames) frames sent arrived (\(dropped) dropped in overruns)"
    }
    return nil
}
