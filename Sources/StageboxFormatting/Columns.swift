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
