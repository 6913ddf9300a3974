package lifetime

import (
	"slices"

	"github.com/heapx/heapx/formats/memtrace"
)

// sweepCycles finds the dead cycles among the queued nodes: it marks what
// the live contexts reach, then, latest stamp first, collects each
// unmarked queued node with everything unmarked it reaches, all dead at
// the later of the two stamps. Processing the latest stamp first is the
// Merlin algorithm's guarantee: the node of a dead structure whose last
// reference went last is met first, and its stamp is when every node it
// reaches became unreachable.
func (s *Simulator) sweepCycles() {
	q := s.cycleQ[:0]
	for _, i := range s.cycleQ {
		n := &s.nodes[i]
		if n.flags&(fDead|fPinned) != 0 || n.rc == 0 || n.mark == s.epoch+1 {
			continue
		}
		n.mark = s.epoch + 1 // queued once
		q = append(q, i)
	}
	slices.SortFunc(q, func(a, b int32) int {
		sa, sb := s.nodes[a].stamp, s.nodes[b].stamp
		switch {
		case sa > sb:
			return -1
		case sa < sb:
			return 1
		}
		return int(a - b)
	})
	live := s.epoch + 2 // reached from a root
	gone := s.epoch + 3
	s.epoch += 3
	s.markFrom(s.globalCtx, live)
	s.markFrom(s.ids[memtrace.GlobalObject], live)
	for _, f := range s.stack {
		s.markFrom(f.ctx, live)
	}
	for _, c := range s.pinned {
		s.markFrom(c, live)
	}
	for _, z := range s.zeroQ {
		s.markFrom(z, live) // held by a temporary until it is decided
	}
	s.collected = s.collected[:0]
	for _, start := range q {
		if s.nodes[start].mark == live || s.nodes[start].mark == gone {
			continue
		}
		t0 := s.nodes[start].stamp
		s.work = append(s.work[:0], start)
		s.nodes[start].mark = gone
		for len(s.work) > 0 {
			i := s.work[len(s.work)-1]
			s.work = s.work[:len(s.work)-1]
			s.collected = append(s.collected, i)
			// A collected node's stamp is read no more but here: it
			// becomes its time of death.
			s.nodes[i].stamp = max(t0, s.nodes[i].stamp)
			for e := s.nodes[i].first; e >= 0; e = s.edges[e].next {
				if to := s.edges[e].to; to >= 0 && s.nodes[to].mark != live && s.nodes[to].mark != gone {
					s.nodes[to].mark = gone
					s.work = append(s.work, to)
				}
			}
		}
	}
	dying := func(i int32) bool { return s.nodes[i].mark == gone }
	for _, i := range s.collected {
		s.kill(i, s.nodes[i].stamp, dying)
	}
	s.cycleQ = s.cycleQ[:0]
}

// markFrom marks with m everything reachable from root.
func (s *Simulator) markFrom(root int32, m uint32) {
	if root < 0 || s.nodes[root].mark == m {
		return
	}
	s.nodes[root].mark = m
	s.work = append(s.work[:0], root)
	for len(s.work) > 0 {
		i := s.work[len(s.work)-1]
		s.work = s.work[:len(s.work)-1]
		for e := s.nodes[i].first; e >= 0; e = s.edges[e].next {
			if to := s.edges[e].to; to >= 0 && s.nodes[to].mark != m {
				s.nodes[to].mark = m
				s.work = append(s.work, to)
			}
		}
	}
}

// End closes the trace at time t: what no live context reaches dies at its
// exact time, and every object still reachable is reported alive at the
// end (AtEnd). Calls still running (a program that exited mid-call) keep
// their contexts as roots.
func (s *Simulator) End(t uint64) {
	if s.ended {
		return
	}
	s.ended = true
	s.now = max(s.now, t)
	s.flush(s.now, true)
	if len(s.Idles) == 0 {
		s.Idles, s.IdleMillis = s.depthIdles, nil
	}
	s.heldBy, s.HeldAtEnd = s.heldAtEnd()
	// Objects alive at the end with their owner die together, for
	// inlining: both at the end.
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.flags&(fDead|fContext) != 0 || n.owner == 0 || n.flags&fMultiOwner != 0 {
			continue
		}
		if o, ok := s.ids[n.owner]; ok && s.nodes[o].flags&(fDead|fOwnsMany) == 0 {
			n.flags |= fOwnerDied
			n.ownerDied = s.now
		}
	}
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.flags&(fDead|fContext|fCallee) == 0 && n.id != 0 && n.id != memtrace.GlobalObject && s.ids[n.id] == int32(i) {
			s.finish(int32(i), s.now, true)
		}
	}
	s.release(^uint64(0))
}

// Now is the time of the latest event.
func (s *Simulator) Now() uint64 { return s.now }
