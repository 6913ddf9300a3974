package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/heapx/heapx/formats"
)

// DumpJVM has the Java virtual machine with process id pid write a heap
// dump of its live objects (HPROF) to path, through the JDK's
// `jcmd PID GC.heap_dump`, gzip-compressed when path ends in ".gz". It
// returns the file's size.
//
// The JVM writes the dump itself, so it goes first to a temporary name
// beside path (as an absolute path: the JVM's working directory is not
// heapx's) and is moved into place, or compressed into place, only when
// complete, like every file heapx writes.
func DumpJVM(ctx context.Context, pid int, path string) (int64, error) {
	jcmd, err := exec.LookPath("jcmd")
	if err != nil {
		return 0, errors.New("jcmd not found on PATH: it comes with a JDK (not with a JRE alone); install one, or add its bin directory to PATH")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	gz := strings.HasSuffix(strings.ToLower(path), ".gz")
	if !gz {
		err := formats.WriteFileAtomic(abs, func(tmp string) error {
			dump := tmp + ".hprof"
			defer os.Remove(dump)
			if err := heapDump(ctx, jcmd, pid, dump); err != nil {
				return err
			}
			return os.Rename(dump, tmp)
		})
		if err != nil {
			return 0, err
		}
		st, err := os.Stat(abs)
		if err != nil {
			return 0, err
		}
		return st.Size(), nil
	}
	dump := filepath.Join(filepath.Dir(abs), "."+filepath.Base(abs)+".jcmd-heapx-"+strconv.Itoa(os.Getpid())+".hprof")
	defer os.Remove(dump)
	if err := heapDump(ctx, jcmd, pid, dump); err != nil {
		return 0, err
	}
	return writeFile(abs, func(w io.Writer) error {
		f, err := os.Open(dump)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
}

// heapDump runs jcmd PID GC.heap_dump FILE. jcmd reports the JVM's
// failures (no such process, a file that exists) on its output, with exit
// status 0 for some, so success is what the JVM says and a file there.
func heapDump(ctx context.Context, jcmd string, pid int, file string) error {
	cmd := exec.CommandContext(ctx, jcmd, strconv.Itoa(pid), "GC.heap_dump", file)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	msg := strings.TrimSpace(out.String())
	if st, serr := os.Stat(file); err == nil && serr == nil && st.Size() > 0 && strings.Contains(msg, "Heap dump file created") {
		return nil
	}
	// jcmd's first line is "PID:" when it reached the JVM; a Java
	// exception's stack trace after its first line says nothing more.
	msg = strings.TrimSpace(strings.TrimPrefix(msg, strconv.Itoa(pid)+":"))
	msg, _, _ = strings.Cut(msg, "\n")
	if msg == "" && err != nil {
		msg = err.Error()
	}
	return fmt.Errorf("jcmd %d GC.heap_dump failed: %s", pid, msg)
}
