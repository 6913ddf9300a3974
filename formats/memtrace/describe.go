package memtrace

import "fmt"

// String is the event on one line: its time, kind, place and fields, as
// tests compare sequences of events and a person reads a trace.
func (ev Event) String() string {
	h := fmt.Sprintf("%d %s", ev.Time, ev.Kind)
	if ev.At != 0 {
		h += " " + ev.Pos.String()
	}
	switch ev.Kind {
	case ScriptDef:
		return fmt.Sprintf("%d SCRIPT %s iids %d..%d", ev.Time, ev.File, ev.Base+1, ev.Base+ev.N)
	case FreeVars:
		if ev.AnyVars {
			return h + " any"
		}
		return fmt.Sprintf("%s %v", h, ev.Names)
	case LastUse:
		return fmt.Sprintf("%d LAST_USE obj %d at %d %s", ev.Time, ev.Obj, ev.UseTime, ev.Pos)
	case EndLastUse:
		return fmt.Sprintf("%s %d", h, ev.UseTime)
	case Unseen:
		return fmt.Sprintf("%s what %d %q", h, ev.How, ev.Text)
	case Exit:
		return fmt.Sprintf("%s code %d how %d %q", h, ev.Code, ev.How, ev.Text)
	case End:
		return fmt.Sprintf("%s code %d signal %d flags %d", h, ev.Code, ev.Signal, ev.Flags)
	case Idle:
		return fmt.Sprintf("%s %d ms", h, ev.Millis)
	case Signal:
		return h + " " + ev.Text
	case Declare, Write:
		return fmt.Sprintf("%s ctx %d %s = %d", h, ev.Ctx, ev.Name, ev.Value)
	case CreateObj:
		return fmt.Sprintf("%s obj %d kind %d", h, ev.Obj, ev.ObjectKind)
	case CreateFun:
		return fmt.Sprintf("%s obj %d ctx %d proto %d", h, ev.Obj, ev.Ctx, ev.Proto)
	case PutField:
		return fmt.Sprintf("%s %d.%s = %d", h, ev.Obj, ev.Key, ev.Value)
	case FunctionEnter:
		return fmt.Sprintf("%s ctx %d parent %d fn %d", h, ev.Ctx, ev.Parent, ev.Obj)
	case FunctionExit, ScriptExit:
		return fmt.Sprintf("%s ctx %d how %d", h, ev.Ctx, ev.How)
	case Return:
		return fmt.Sprintf("%s ctx %d value %d", h, ev.Ctx, ev.Value)
	case Call:
		return fmt.Sprintf("%s fn %d", h, ev.Obj)
	case Suspend, Resume:
		return fmt.Sprintf("%s ctx %d", h, ev.Ctx)
	case UpdateIID:
		return fmt.Sprintf("%s obj %d", h, ev.Obj)
	case ScriptEnter:
		return fmt.Sprintf("%s script %d ctx %d", h, ev.Script, ev.Ctx)
	case CollSet:
		return fmt.Sprintf("%s %d %s = %d", h, ev.Obj, ev.Key, ev.Value)
	case CollDelete:
		return fmt.Sprintf("%s %d %s", h, ev.Obj, ev.Key)
	case CollClear:
		return fmt.Sprintf("%s %d", h, ev.Obj)
	}
	return h
}
