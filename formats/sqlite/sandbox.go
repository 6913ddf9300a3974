package sqlite

import (
	"os"
	"strings"

	"zombiezen.com/go/sqlite"
)

// OpenReadOnly opens the database at path for reading only, three times
// over: the file is opened with SQLITE_OPEN_READONLY, PRAGMA query_only
// makes SQLite refuse any statement that would write, and an authorizer
// refuses, when a statement is prepared, everything but reading (readOnly),
// which also stops what the first two let through: ATTACH and VACUUM INTO
// create files elsewhere, and a PRAGMA could turn query_only off. Neither
// a user's query nor a bug can change a dump or write a file. The path is
// taken as a plain file name, never as a URI.
func OpenReadOnly(path string) (*sqlite.Conn, error) {
	if _, err := os.Stat(path); err != nil {
		// SQLite would say "unable to open database file"; say what is
		// wrong instead.
		return nil, err
	}
	conn, err := sqlite.OpenConn(path, sqlite.OpenReadOnly)
	if err != nil {
		return nil, err
	}
	if err := exec(conn, "PRAGMA query_only = ON"); err != nil {
		conn.Close()
		return nil, err
	}
	if err := conn.SetAuthorizer(sqlite.AuthorizeFunc(readOnly)); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// readOnly is the authorizer of read-only connections: SELECT and what it
// reads and calls, transactions (harmless without writes), and PRAGMAs
// that only report something.
func readOnly(a sqlite.Action) sqlite.AuthResult {
	switch a.Type() {
	case sqlite.OpSelect, sqlite.OpRead, sqlite.OpFunction, sqlite.OpRecursive, sqlite.OpTransaction, sqlite.OpSavepoint:
		return sqlite.AuthResultOK
	case sqlite.OpPragma:
		name := strings.ToLower(a.Pragma())
		if introspection[name] || a.PragmaArg() == "" && !sideEffects[name] {
			return sqlite.AuthResultOK
		}
	}
	return sqlite.AuthResultDeny
}

// introspection are the PRAGMAs whose argument names what to describe
// (a table, an index), not a new setting.
var introspection = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true, "index_list": true, "index_info": true,
	"index_xinfo": true, "foreign_key_list": true, "foreign_key_check": true, "integrity_check": true,
	"quick_check": true,
}

// sideEffects are the PRAGMAs that act even without an argument.
var sideEffects = map[string]bool{
	"optimize": true, "shrink_memory": true, "wal_checkpoint": true, "incremental_vacuum": true,
}
