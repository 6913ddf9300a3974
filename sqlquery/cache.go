// Package sqlquery runs read-only SQL over heap dumps, for every front end
// that offers it (heapx sql, heapx serve's SQL console): it finds or builds
// the SQLite form of a dump (a .db is queried as it is, any other dump
// through a cached copy that is reused while the dump is unchanged), and
// runs one statement through a read-only connection, handing the typed
// cells of each row to a RowWriter.
package sqlquery

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/heapx/heapx/formats"
	hsql "github.com/heapx/heapx/formats/sqlite"
	"github.com/heapx/heapx/model"
)

// Choice is where the user asked to keep the SQLite copy of a dump: at
// Path (heapx sql --cache: a file, or a directory to keep it in), or
// nowhere (None: a temporary copy, deleted after use).
type Choice struct {
	Path string
	None bool
}

// DB is the SQLite file queries run on: a .db given as the dump, or the
// copy of another dump.
type DB struct {
	Path string
	// Source is the dump the copy was made from, "" for a .db queried as
	// it is; Temp says the copy is to be deleted after use.
	Source string
	Temp   bool
}

// Builder says how a copy is made when none is fresh.
type Builder struct {
	// Load reads the dump at path with analysis results: those it
	// carries, else computed (the first questions asked in SQL are about
	// retained sizes).
	Load func(path string) (*model.Graph, *model.Results, error)
	// Save writes the copy of g made from source at target with opt (a
	// temporary one when temp). It is hsql.Save, wrapped by front ends
	// that say what they write and show progress (opt.Progress).
	Save func(source, target string, g *model.Graph, opt hsql.WriteOptions, temp bool) error
	// Writable reports whether a file can be created in dir; nil means
	// DirWritable.
	Writable func(dir string) bool
}

func (b Builder) writable(dir string) bool {
	if b.Writable != nil {
		return b.Writable(dir)
	}
	return DirWritable(dir)
}

// Open returns the SQLite file to query for the dump at path: path itself
// when it is in the SQLite form, else the copy choice asks for, built
// first when missing or stale.
func Open(path string, choice Choice, b Builder) (*DB, error) {
	f, err := formats.Detect(path)
	if err != nil {
		return nil, err
	}
	if f.Name == hsql.Name {
		return &DB{Path: path}, nil
	}
	return Cached(path, choice, b)
}

// Metadata keys a cached conversion records about its input, so it is
// reused only while the input is unchanged. The hash of the first MiB
// catches a file rewritten within the mtime granularity with the same size.
const (
	metaSourceFile  = "heapx:source_file"
	metaSourceSize  = "heapx:source_size"
	metaSourceMtime = "heapx:source_mtime_ns"
	metaSourceHead  = "heapx:source_head_sha256"
	metaCacheSchema = "heapx:cache_schema"
)

// cacheSchema changes when a cache made by an older heapx must not be
// reused (different tables or analysis columns).
const cacheSchema = "2" // 2: v8_location.script_node_identifier

// cacheHeadBytes is how much of the input the cache key hashes.
const cacheHeadBytes = 1 << 20

// CacheSuffix is appended to the input's name for the cache beside it.
const CacheSuffix = ".heapx.db"

// BesideLimit is the largest copy left beside its input unasked. A copy
// is 2-4 times the size of the dump uncompressed, up to 40 times a
// gzip-compressed one, so beside a dump in a project, a download or a
// shared directory it is a surprise: it fills the disk or a quota, gets
// backed up, synced or committed with the dump. Up to 100 MiB (the cache
// of a dump of about half a million objects) no disk misses it, and beside
// the dump it is handy: seen in a listing, deleted with the dump. Larger,
// it goes where regenerable data belongs, the user cache directory, which
// backups skip and cleaners empty.
const BesideLimit = 100 << 20

// Cached returns a fresh SQLite copy of the dump at path as choice says,
// making it when no fresh one exists. Without a choice of path, a fresh
// copy beside path or in the user cache directory (heapx/ under
// os.UserCacheDir, keyed by the input's absolute path) is reused; a new
// one goes beside path when it will be at most BesideLimit and the
// directory is writable, else to the user cache directory, as does the
// copy of a Parquet partition (a directory: its files' names, sizes and
// times key its copy).
func Cached(path string, choice Choice, b Builder) (*DB, error) {
	key, err := sourceKey(path)
	if err != nil {
		return nil, err
	}
	beside := path + CacheSuffix
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		// A Parquet partition: beside it is its fleet's directory,
		// which engines and heapx export read as theirs.
		beside = ""
	}
	var user string
	if dir, err := os.UserCacheDir(); err == nil {
		abs, _ := filepath.Abs(path)
		h := sha256.Sum256([]byte(abs))
		user = filepath.Join(dir, "heapx", hex.EncodeToString(h[:8])+"-"+filepath.Base(path)+CacheSuffix)
	}
	candidates := []string{beside, user}
	if choice.Path != "" {
		p, err := explicitCache(choice.Path, path)
		if err != nil {
			return nil, err
		}
		candidates = []string{p}
	}
	if !choice.None {
		for _, c := range candidates {
			if c != "" && cacheFresh(c, key) {
				return &DB{Path: c, Source: path}, nil
			}
		}
	}
	g, res, err := b.Load(path)
	if err != nil {
		return nil, err
	}
	target := candidates[0]
	if choice.Path == "" {
		size := hsql.EstimateSize(g, hsql.WriteOptions{Results: res, NoPacked: true})
		if beside == "" && user == "" {
			return nil, fmt.Errorf("%s: cannot keep a SQL cache: there is no user cache directory (use --cache PATH)", path)
		}
		if beside == "" || size > BesideLimit || !b.writable(filepath.Dir(path)) {
			if user == "" {
				if !b.writable(filepath.Dir(path)) {
					return nil, fmt.Errorf("%s: cannot keep a SQL cache: %s is not writable and there is no user cache directory (use --cache PATH)", path, filepath.Dir(path))
				}
			} else {
				if err := os.MkdirAll(filepath.Dir(user), 0o700); err != nil {
					return nil, fmt.Errorf("%s: cannot keep a SQL cache: %w (use --cache PATH)", path, err)
				}
				os.Chmod(filepath.Dir(user), 0o700) // one an older heapx made 0755 holds copies of dumps
				target = user
			}
		}
	}
	if choice.None {
		// Beside the copy it replaces, under a name no other run uses;
		// not in the temporary directory, often a RAM disk.
		f, err := os.CreateTemp(filepath.Dir(target), "."+filepath.Base(path)+".heapx-*.db")
		if err != nil {
			return nil, fmt.Errorf("%s: cannot build a temporary SQL cache: %w", path, err)
		}
		f.Close()
		os.Remove(f.Name())
		target = f.Name()
	}
	return write(path, g, res, key, target, b, choice.None)
}

// Rebuild replaces the copy db with a new one, at the same place (after
// SQLite found it damaged: IsCorrupt).
func (db *DB) Rebuild(b Builder) error {
	key, err := sourceKey(db.Source)
	if err != nil {
		return err
	}
	g, res, err := b.Load(db.Source)
	if err != nil {
		return err
	}
	n, err := write(db.Source, g, res, key, db.Path, b, db.Temp)
	if err == nil {
		*db = *n
	}
	return err
}

// explicitCache is the copy's file for Choice.Path p: p, or the copy's
// usual name inside p when p is a directory. An existing file is replaced
// only when its metadata says heapx made it as a cache: anything else, a
// damaged file included, may be the user's.
func explicitCache(p, source string) (string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return p, nil
	}
	if st.IsDir() {
		return filepath.Join(p, filepath.Base(source)+CacheSuffix), nil
	}
	if f, err := formats.Detect(p); err == nil && f.Name == hsql.Name {
		meta, err := hsql.ReadMeta(p)
		for _, kv := range meta {
			if kv.Key == metaSourceFile {
				return p, nil
			}
		}
		if err != nil {
			return "", fmt.Errorf("--cache %s: the file exists and cannot be read (%v); delete it, or name a new file or a directory", p, err)
		}
	}
	return "", fmt.Errorf("--cache %s: the file exists and is not a cache heapx sql made; name a new file or a directory", p)
}

// write writes the SQLite copy of g, made from source, at target.
func write(source string, g *model.Graph, res *model.Results, key []model.KV, target string, b Builder, temp bool) (*DB, error) {
	opt := hsql.WriteOptions{Results: res, Meta: key, NoPacked: true, Sources: []string{source}}
	save := b.Save
	if save == nil {
		save = func(_, target string, g *model.Graph, opt hsql.WriteOptions, _ bool) error {
			return hsql.Save(target, g, opt)
		}
	}
	if err := save(source, target, g, opt, temp); err != nil {
		return nil, fmt.Errorf("%s: writing the SQL cache %s: %w", source, target, err)
	}
	return &DB{Path: target, Source: source, Temp: temp}, nil
}

// DirWritable reports whether a file can be created in dir, by creating
// one: permission bits do not tell (root, read-only mounts, ACLs).
func DirWritable(dir string) bool {
	f, err := os.CreateTemp(dir, ".heapx-probe-*")
	if err != nil {
		return false
	}
	name := f.Name()
	f.Close()
	os.Remove(name)
	return true
}

// sourceKey is the metadata identifying the input's current content.
func sourceKey(path string) ([]model.KV, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	if st.IsDir() {
		err = hashListing(h, f)
	} else {
		_, err = io.Copy(h, io.LimitReader(f, cacheHeadBytes))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return []model.KV{
		{Key: metaCacheSchema, Value: cacheSchema},
		{Key: metaSourceFile, Value: abs},
		{Key: metaSourceSize, Value: strconv.FormatInt(st.Size(), 10)},
		{Key: metaSourceMtime, Value: strconv.FormatInt(st.ModTime().UnixNano(), 10)},
		{Key: metaSourceHead, Value: hex.EncodeToString(h.Sum(nil))},
	}, nil
}

// hashListing writes the names, sizes and times of the files in the
// directory dir (a Parquet partition, read as one dump) to h: what the
// head of a file is to its key, since a partition's tables are rewritten
// whole.
func hashListing(h io.Writer, dir *os.File) error {
	ents, err := dir.ReadDir(-1)
	if err != nil {
		return err
	}
	// ReadDir's order is the file system's: sorted, the key is stable.
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range ents {
		info, err := e.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%d\n", e.Name(), info.Size(), info.ModTime().UnixNano())
	}
	return nil
}

// cacheFresh reports whether the SQLite file at db exists, is readable and
// records exactly key. Anything wrong with it (missing, corrupt, another
// input, an older heapx) means it is rebuilt.
func cacheFresh(db string, key []model.KV) bool {
	if _, err := os.Stat(db); err != nil {
		return false
	}
	meta, err := hsql.ReadMeta(db)
	if err != nil {
		return false
	}
	have := map[string]string{}
	for _, kv := range meta {
		have[kv.Key] = kv.Value
	}
	for _, kv := range key {
		if have[kv.Key] != kv.Value {
			return false
		}
	}
	return true
}
