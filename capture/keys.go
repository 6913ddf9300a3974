package capture

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// key is a key as the DevTools protocol's Input.dispatchKeyEvent takes
// it (the DOM's KeyboardEvent key and code, Windows' virtual key code),
// with what it types and the modifiers held.
type key struct {
	key, code string
	vk        int
	text      string // typed by the key ("\r" for Enter); "" for none
	modifiers int    // Input's bits: Alt 1, Control 2, Meta 4, Shift 8
}

// namedKeys are the keys a step names; a single character is the key
// that types it.
var namedKeys = map[string]key{
	"Enter":      {key: "Enter", code: "Enter", vk: 13, text: "\r"},
	"Escape":     {key: "Escape", code: "Escape", vk: 27},
	"Tab":        {key: "Tab", code: "Tab", vk: 9},
	"Backspace":  {key: "Backspace", code: "Backspace", vk: 8},
	"Delete":     {key: "Delete", code: "Delete", vk: 46},
	"Space":      {key: " ", code: "Space", vk: 32, text: " "},
	"ArrowUp":    {key: "ArrowUp", code: "ArrowUp", vk: 38},
	"ArrowDown":  {key: "ArrowDown", code: "ArrowDown", vk: 40},
	"ArrowLeft":  {key: "ArrowLeft", code: "ArrowLeft", vk: 37},
	"ArrowRight": {key: "ArrowRight", code: "ArrowRight", vk: 39},
	"Home":       {key: "Home", code: "Home", vk: 36},
	"End":        {key: "End", code: "End", vk: 35},
	"PageUp":     {key: "PageUp", code: "PageUp", vk: 33},
	"PageDown":   {key: "PageDown", code: "PageDown", vk: 34},
}

// modifierBits are the modifiers a key's name may hold: "Control+a".
var modifierBits = map[string]int{"Alt": 1, "Control": 2, "Ctrl": 2, "Meta": 4, "Shift": 8}

// parseKey reads a key as a press step names it: Enter, Escape, a,
// Shift+Tab, Control+a, F5.
func parseKey(name string) (key, error) {
	if name == "" {
		return key{}, fmt.Errorf("no key")
	}
	// The last + that is not the last character ends the modifiers, so
	// that "Control++" is Control and the plus key.
	mods, last := "", name
	if i := strings.LastIndex(name[:len(name)-1], "+"); i >= 0 {
		mods, last = name[:i], name[i+1:]
	}
	bits := 0
	if mods != "" {
		for m := range strings.SplitSeq(mods, "+") {
			bit, ok := modifierBits[m]
			if !ok {
				return key{}, fmt.Errorf("%q is not a modifier (Alt, Control, Meta, Shift)", m)
			}
			bits |= bit
		}
	}
	k, err := baseKey(last)
	if err != nil {
		return key{}, err
	}
	k.modifiers = bits
	if bits&(1|2|4) != 0 {
		k.text = "" // a shortcut types nothing
	}
	return k, nil
}

// baseKey is a key without modifiers: a named one, a function key, or
// the key that types one character.
func baseKey(name string) (key, error) {
	if k, ok := namedKeys[name]; ok {
		return k, nil
	}
	var f int
	if n, _ := fmt.Sscanf(name, "F%d", &f); n == 1 && f >= 1 && f <= 12 && name == fmt.Sprintf("F%d", f) {
		return key{key: name, code: name, vk: 111 + f}, nil
	}
	if utf8.RuneCountInString(name) != 1 {
		return key{}, fmt.Errorf("%q is not a key: name one (Enter, Escape, Tab, Backspace, Delete, Space, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Home, End, PageUp, PageDown, F1-F12) or give one character", name)
	}
	return charKey(name), nil
}

// charKey is the key that types the one character c: its code and
// virtual key code for letters and digits (which pages check), the
// character alone for others.
func charKey(c string) key {
	k := key{key: c, text: c}
	switch r := rune(c[0]); {
	case len(c) == 1 && r >= 'a' && r <= 'z':
		k.code, k.vk = "Key"+strings.ToUpper(c), int(r-'a'+'A')
	case len(c) == 1 && r >= 'A' && r <= 'Z':
		k.code, k.vk = "Key"+c, int(r)
	case len(c) == 1 && r >= '0' && r <= '9':
		k.code, k.vk = "Digit"+c, int(r)
	}
	return k
}
