//go:build cuda && cgo

package dl

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

#include <string.h>

// The loader's error message is per thread, so each helper reads it in the same C
// call as the failing dlopen/dlsym and returns a malloc'd copy (the caller frees it).
static char *ggsim_dlerr(void) {
	const char *e = dlerror();
	return e ? strdup(e) : NULL;
}

static void *ggsim_dlopen(const char *name, int global, char **err) {
	dlerror();
	void *h = dlopen(name, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
	*err = h ? NULL : ggsim_dlerr();
	return h;
}

static void *ggsim_dlsym(void *h, const char *name, char **err) {
	dlerror();
	void *p = dlsym(h, name);
	*err = ggsim_dlerr();
	return p;
}

static int ggsim_dlclose(void *h, char **err) {
	dlerror();
	int r = dlclose(h);
	*err = r ? ggsim_dlerr() : NULL;
	return r;
}
*/
import "C"

import (
	"fmt"
	"strings"
	"sync"
	"unsafe"
)

// Built reports whether this build can load libraries (built with the cuda tag and cgo).
const Built = true

// Library is a shared library opened with dlopen.
type Library struct {
	name string // the name or path that opened it

	mu     sync.Mutex
	h      unsafe.Pointer
	closed bool
}

// takeErr converts and frees a message from the C helpers; "" if none.
func takeErr(e *C.char) string {
	if e == nil {
		return ""
	}
	defer C.free(unsafe.Pointer(e))
	return C.GoString(e)
}

// Open tries each candidate (a file name searched the loader's way, or a path) in order
// and returns the first that loads, with RTLD_NOW|RTLD_LOCAL. The error lists every
// candidate with the loader's message.
func Open(candidates ...string) (*Library, error) { return open(false, candidates) }

// OpenGlobal is Open with RTLD_GLOBAL: the library's symbols then resolve later
// libraries' undefined symbols (ggml's backends need ggml-base loaded this way when
// they are loaded from a directory that their RUNPATH does not name).
func OpenGlobal(candidates ...string) (*Library, error) { return open(true, candidates) }

func open(global bool, candidates []string) (*Library, error) {
	if len(candidates) == 0 {
		return nil, fmt.Errorf("dl: dlopen: no library name given")
	}
	var msgs []string
	for _, name := range candidates {
		if name == "" {
			continue
		}
		h, msg := dlopen(name, global)
		if h != nil {
			return &Library{name: name, h: h}, nil
		}
		msgs = append(msgs, fmt.Sprintf("%s: %s", name, msg))
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("dl: dlopen: only empty library names given")
	}
	return nil, fmt.Errorf("dl: dlopen failed for every candidate: %s", strings.Join(msgs, "; "))
}

func dlopen(name string, global bool) (unsafe.Pointer, string) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	g := C.int(0)
	if global {
		g = 1
	}
	var e *C.char
	h := C.ggsim_dlopen(cs, g, &e)
	msg := takeErr(e)
	if h == nil {
		if msg == "" {
			msg = "unknown dlopen error"
		}
		return nil, msg
	}
	return h, ""
}

// Name returns the name or path the library was opened with.
func (l *Library) Name() string { return l.name }

// Sym returns the address of the named symbol. A missing symbol is an error naming
// the symbol, the library and the loader's message.
func (l *Library) Sym(name string) (unsafe.Pointer, error) {
	l.mu.Lock()
	h, closed := l.h, l.closed
	l.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("dl: dlsym %s in %s: library is closed", name, l.name)
	}
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var e *C.char
	p := C.ggsim_dlsym(h, cs, &e)
	if msg := takeErr(e); msg != "" {
		return nil, fmt.Errorf("dl: dlsym %s in %s: %s", name, l.name, msg)
	}
	if p == nil {
		return nil, fmt.Errorf("dl: dlsym %s in %s: symbol is NULL", name, l.name)
	}
	return p, nil
}

// Syms resolves several symbols at once; the error names the first one missing.
func (l *Library) Syms(names ...string) ([]unsafe.Pointer, error) {
	out := make([]unsafe.Pointer, len(names))
	for i, n := range names {
		p, err := l.Sym(n)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

// Close calls dlclose. Symbols taken from the library must not be used afterwards.
func (l *Library) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var e *C.char
	if C.ggsim_dlclose(l.h, &e) != 0 {
		return fmt.Errorf("dl: dlclose %s: %s", l.name, takeErr(e))
	}
	return nil
}
