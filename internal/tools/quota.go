package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// quotas is this process's bookkeeping of the outputs quota: the files
// being written and the room each was granted. What is on disk is read
// afresh at every grant, so files removed or added by anyone else count
// at once; two processes sharing a home can each overshoot by what their
// open files were granted but have not written yet (a few MiB).
var quotas = &quotaKeeper{active: map[string]int64{}}

type quotaKeeper struct {
	mu sync.Mutex
	// active maps base + "\x00" + rel of a file being written to the bytes
	// it was granted.
	active map[string]int64
}

func activeKey(base, rel string) string { return base + "\x00" + rel }

// create creates a new file for a session's output under base
// (createSpillFile) and registers it as being written, under the lock that
// eviction holds: a file on disk that is not registered yet is one
// another reserve may remove.
func (q *quotaKeeper) create(base, session string) (*os.File, string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	f, rel, err := createSpillFile(base, session)
	if err == nil {
		q.active[activeKey(base, rel)] = 0
	}
	return f, rel, err
}

// release forgets a finished file: from now on its size on disk is what
// counts.
func (q *quotaKeeper) release(base, rel string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.active, activeKey(base, rel))
}

// keptFile is one file under the outputs directory.
type keptFile struct {
	rel   string
	size  int64
	mtime time.Time
}

// reserve grants rel (a file being written under base) up to want more
// bytes within quota, the bound of everything under base: what is on disk
// plus what files being written were granted and have not written yet.
// When that does not leave need (at most want), the oldest files not
// being written are removed until it does, if removing them can; else
// nothing is removed, and what is granted is less (even 0).
func (q *quotaKeeper) reserve(base, rel string, need, want, quota int64) int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	files := scanKept(base)
	used := int64(0)
	onDisk := map[string]int64{}
	for _, f := range files {
		used += f.size
		onDisk[f.rel] = f.size
	}
	for key, granted := range q.active {
		if b, r, ok := splitKey(key); ok && b == base && granted > onDisk[r] {
			used += granted - onDisk[r]
		}
	}
	evictable := int64(0)
	for _, f := range files {
		if _, busy := q.active[activeKey(base, f.rel)]; !busy {
			evictable += f.size
		}
	}
	// Files are removed only when that leaves need: removing them for a
	// grant that would still be too small (files being written hold the
	// rest) loses them for nothing.
	if used+need > quota && used-evictable+need <= quota {
		sort.Slice(files, func(i, j int) bool { return files[i].mtime.Before(files[j].mtime) })
		for _, f := range files {
			if used+need <= quota {
				break
			}
			if _, busy := q.active[activeKey(base, f.rel)]; busy {
				continue
			}
			if err := removeUnder(base, f.rel); err == nil {
				used -= f.size
			}
		}
	}
	got := min(want, quota-used)
	if got <= 0 {
		return 0
	}
	q.active[activeKey(base, rel)] += got
	return got
}

// splitKey undoes activeKey.
func splitKey(key string) (base, rel string, ok bool) {
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return key[:i], key[i+1:], true
		}
	}
	return "", "", false
}

// scanKept lists the regular files under base (symlinks are not
// followed), relative to base.
func scanKept(base string) []keptFile {
	var out []keptFile
	_ = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(base, path)
		if err != nil {
			return nil
		}
		out = append(out, keptFile{rel: rel, size: info.Size(), mtime: info.ModTime()})
		return nil
	})
	return out
}
