import StageboxEngine
import StageboxPortRules
import TOMLKit

/// What survives a reboot: the graph as it was changed at run time, on top of the
/// configuration. Written as a small versioned TOML document:
///
///     version = 1
///     connections = ["call.out -> codec.out"]   # made at run time
///     removed = ["codec.in -> codec.out"]        # the configuration's, taken away at run time
///     muted = ["codec.in"]
///     complete = true                            # last: a file cut short lacks it
///
/// Connections and mutes of client ports that are gone are kept: they come back with the port.
public struct SavedState: Sendable, Equatable {
    public static let version = 1
    public var connections: [Connection]
    public var removed: [Connection]
    public var muted: [String]

    public init(connections: [Connection] = [], removed: [Connection] = [], muted: [String] = []) {
        self.connections = connections
        self.removed = removed
        self.muted = muted
    }

    public var isEmpty: Bool { connections.isEmpty && removed.isEmpty && muted.isEmpty }

    /// The document.
    public var text: String {
        func list(_ items: [String]) -> String { "[" + items.map { "\"\($0)\"" }.joined(separator: ", ") + "]" }
        return """
            # Stagebox's state: what was changed at run time, restored at the next start on top of
            # the configuration. Written by stagebox; `state clear` at its console empties it.
            version = \(Self.version)
            connections = \(list(connections.map(\.description)))
            removed = \(list(removed.map(\.description)))
            muted = \(list(muted))
            complete = true

            """
    }

    /// Reads a document; a problem names its line where TOML gives one, else its key.
    public static func parse(_ text: String) throws(StateProblem) -> SavedState {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw StateProblem("line \(error.source.begin.line): \(error.description)")
        } catch {
            throw StateProblem("\(error)")
        }
        for key in table.keys where !["version", "connections", "removed", "muted", "complete"].contains(key) {
            throw StateProblem("unknown key \(key)")
        }
        guard let version = table["version"]?.int else { throw StateProblem("no version") }
        guard version == Self.version else {
            throw StateProblem("version \(version), and this stagebox reads version \(Self.version)")
        }
        let state = SavedState(connections: try connections(table, "connections"), removed: try connections(table, "removed"),
                               muted: try names(table, "muted"))
        guard table["complete"]?.bool == true else { throw StateProblem("cut short: no complete = true at its end") }
        return state
    }

    private static func names(_ table: TOMLTable, _ key: String) throws(StateProblem) -> [String] {
        guard let value = table[key] else { return [] }
        guard let array = value.array, array.allSatisfy({ $0.string != nil }) else {
            throw StateProblem("\(key) must be an array of strings")
        }
        return array.compactMap(\.string)
    }

    private static func connections(_ table: TOMLTable, _ key: String) throws(StateProblem) -> [Connection] {
        var out: [Connection] = []
        for (i, text) in try names(table, key).enumerated() {
            let ends = text.split(separator: " ", omittingEmptySubsequences: true)
            guard ends.count == 3, ends[1] == "->" else {
                throw StateProblem("\(key)[\(i + 1)]: '\(text)' is not written FROM -> TO")
            }
            do throws(PortRuleViolation) {
                out.append(Connection(try PortEndpoint(parsing: String(ends[0])), try PortEndpoint(parsing: String(ends[2]))))
            } catch {
                throw StateProblem("\(key)[\(i + 1)]: \(error)")
            }
        }
        return out
    }
}

/// Why a state document cannot be read.
public struct StateProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
