package main

import (
	"strings"
	"testing"

	"github.com/heapx/heapx/query"
)

// TestPathsNoWeak runs heapx paths --no-weak as a user does, on real
// dumps. A WeakMap's value (node-basic's CustomerNote @93921) is shown
// held by its key (Customer @83757), never through the WeakMap's table,
// which the plain paths take. A path through the runtime's own objects
// (node-leak-3's Map.prototype @6089 reached through an object shape's
// {prototype}) is left out where the object has paths without them; a
// leaked object every path of which goes through one (a LeakedItem held
// by a listener on an EventEmitter) gets the plain paths, and the output
// says so. On a Java heap, Reference.referent is never followed: a
// MethodType an interning set's WeakEntry refers to is shown held by a
// method handle, and a SoftReference's referent has no path.
func TestPathsNoWeak(t *testing.T) {
	t.Parallel()
	plain := ok(t, "paths", basic, "--id", "93921")
	out := ok(t, "paths", basic, "--id", "93921", "--no-weak")
	if !strings.Contains(plain, "WeakMap @93915") || strings.Contains(out, "WeakMap @93915") ||
		!strings.Contains(out, "--no-weak: without weak references (a WeakMap's values, Java's Reference.referent) or the runtime's own objects.\n") ||
		!strings.Contains(out, "Customer @83757") {
		t.Errorf("paths of a WeakMap value:\n%s\nwith --no-weak:\n%s", plain, out)
	}
	var js query.PathsJSON
	okJSON(t, &js, "paths", basic, "--id", "93921", "--no-weak", "--json")
	if !js.NoWeak || js.ThroughRuntime || len(js.Paths) != 2 {
		t.Fatalf("--json: no_weak %v, through_runtime %v, %d paths", js.NoWeak, js.ThroughRuntime, len(js.Paths))
	}
	for _, p := range js.Paths {
		if holder := p.Steps[len(p.Steps)-2].To; holder.ID != 83757 || holder.Constructor != "Customer" {
			t.Errorf("--json: held by %+v", holder)
		}
	}

	shape := ok(t, "paths", leak3, "--id", "6089")
	strict := ok(t, "paths", leak3, "--id", "6089", "--no-weak")
	if !strings.Contains(shape, "{map}                system / Map @45835") || strings.Contains(strict, "system / Map") ||
		!strings.Contains(strict, "Path 2: 4 edges") || strings.Contains(strict, "Path 3") ||
		!strings.Contains(strict, "2 of the 3 paths asked for: no other path within 3 hops of the shortest is without weak references and the runtime's own objects.") {
		t.Errorf("paths of Map.prototype:\n%s\nwith --no-weak:\n%s", shape, strict)
	}

	leaked := ok(t, "paths", leak3, "--id", "92189", "-n", "1", "--no-weak")
	if !strings.Contains(leaked, "Every such path goes through the runtime's own objects (Node's or the engine's): these take the fewest of them.") ||
		!strings.Contains(leaked, ".bus           EventEmitter @51427") {
		t.Errorf("paths --no-weak of a LeakedItem:\n%s", leaked)
	}
	okJSON(t, &js, "paths", leak3, "--id", "92189", "-n", "1", "--no-weak", "--json")
	if !js.NoWeak || !js.ThroughRuntime || len(js.Paths) != 1 || len(js.Paths[0].Steps) != 7 {
		t.Errorf("--json of a LeakedItem: %+v", js)
	}

	java := ok(t, "paths", javaA, "--id", "0xf05c9d20", "-n", "1", "--no-weak")
	if strings.Contains(java, ".referent ") || strings.Contains(java, "WeakEntry") || !strings.Contains(java, ".type                   java.lang.invoke.MethodType @0xf05c9d20") {
		t.Errorf("paths --no-weak of an interned MethodType:\n%s", java)
	}
	if soft := ok(t, "paths", javaA, "--id", "0xf05ca370", "--no-weak"); !strings.Contains(soft, "No retainer path: nothing reachable from the roots keeps this object alive (it is garbage or only weakly held).") {
		t.Errorf("paths --no-weak of a SoftReference's referent:\n%s", soft)
	}
}
