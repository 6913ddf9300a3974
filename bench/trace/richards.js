// A task scheduler in the style of Octane's richards: objects linked
// through queues, method calls, field writes.
'use strict';
class Packet { constructor(link, id, kind) { this.link = link; this.id = id; this.kind = kind; this.a1 = 0; this.a2 = new Array(4).fill(0); }
  addTo(queue) { this.link = null; if (queue === null) return this; let next = queue; while (next.link !== null) next = next.link; next.link = this; return queue; } }
class Task {
  constructor(scheduler, id, priority, queue) { this.scheduler = scheduler; this.id = id; this.priority = priority; this.queue = queue; this.count = 0; }
  run(packet) {
    this.count++;
    if (packet === null) return this.scheduler.next(this);
    packet.a1 = (packet.a1 + this.count) % 26;
    for (let i = 0; i < packet.a2.length; i++) packet.a2[i] = (packet.a2[i] + i + packet.a1) & 0xff;
    packet.id = (packet.id + 1) % this.scheduler.tasks.length;
    return this.scheduler.send(packet);
  }
}
class Scheduler {
  constructor() { this.tasks = []; this.queue = null; this.holds = 0; this.sent = 0; }
  add(priority) { const t = new Task(this, this.tasks.length, priority, null); this.tasks.push(t); return t; }
  next(task) { this.holds++; return this.tasks[(task.id + 1) % this.tasks.length]; }
  send(packet) { this.sent++; const t = this.tasks[packet.id]; t.queue = packet.addTo(t.queue); return t; }
  schedule(steps) {
    let task = this.tasks[0];
    for (let s = 0; s < steps; s++) {
      const packet = task.queue;
      if (packet !== null) task.queue = packet.link;
      task = task.run(packet);
      if ((s & 1023) === 0) task.queue = new Packet(task.queue, task.id, s & 3).addTo(null);
    }
  }
}
const sch = new Scheduler();
for (let i = 0; i < 6; i++) sch.add(i);
for (let i = 0; i < 6; i++) sch.tasks[i].queue = new Packet(null, i, 0);
sch.schedule(Number(process.argv[2] || 3000000));
console.log(sch.holds, sch.sent, sch.tasks.map((t) => t.count).join(','));
