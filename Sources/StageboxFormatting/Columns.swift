extension String {
    /// The string followed by `fill` up to `width` characters (never shortened): a table column.
    public func padded(_ width: Int, with fill: Character = " ") -> String {
        count >= width ? self : self + String(repeating: fill, count: width - count)
    }

    /// The string preceded by `fill` up to `width` characters: a right-aligned column or a
    /// zero-padded number.
    public func leftPadded(_ width: Int, with fill: Character = " ") -> String {
        count >= width ? self : String(repeating: fill, count: width - count) + self
    }

    /// The string without trailing spaces: the last column of a table padded to its width.
    public var trailingSpacesRemoved: String {
        var s = Substring(self)
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}

/// An aligned table with a header, columns two spaces apart, each line cut to `width` columns.
public func textTable(_ header: [String], _ rows: [[String]], width: Int = 80) -> String {
    let all = [header] + rows
    let widths = header.indices.map { i in all.map { $0.count > i ? $0[i].count : 0 }.max() ?? 0 }
    return all.map { row in
        let line = row.enumerated().map { i, cell in i == row.count - 1 ? cell : cell.padded(widths[i]) }
            .joined(separator: "  ")
        return String(line.prefix(width)).trailingSpacesRemoved
    }.joined(separator: "\n")
}
