// A Java program that leaks through three linked structures, for the leak-suspects fixture
// testdata/suspects/java-linked.hprof.gz (see testdata/gen/README.md):
//   - OPEN, a java.util.LinkedList of tickets (doubly linked, held at both ends);
//   - JOBS, the head of a singly linked list of the program's own Job objects (each new job is pushed in front);
//   - QUEUE, a java.util.concurrent.ConcurrentLinkedQueue of tickets (singly linked nodes, a chain of dominators).
// Nothing is ever removed. Usage: java LinkedStore <tickets> <jobs> <queued> <readyFile>
// After building its heap it writes <readyFile> (its pid) and sleeps until it is dumped and killed.
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.ConcurrentLinkedQueue;

public class LinkedStore {
    static final class Ticket {
        final long id; final String subject;
        Ticket(long id, String subject) { this.id = id; this.subject = subject; }
    }
    static final class Job {
        final long id; final byte[] payload; final Job next;
        Job(long id, byte[] payload, Job next) { this.id = id; this.payload = payload; this.next = next; }
    }
    static final LinkedList<Ticket> OPEN = new LinkedList<>();
    static final ConcurrentLinkedQueue<Ticket> QUEUE = new ConcurrentLinkedQueue<>();
    static Job JOBS;

    public static void main(String[] args) throws Exception {
        int tickets = Integer.parseInt(args[0]), jobs = Integer.parseInt(args[1]), queued = Integer.parseInt(args[2]);
        Path ready = Paths.get(args[3]);
        for (int i = 0; i < tickets; i++) OPEN.add(new Ticket(i, "open ticket " + i));
        for (int i = 0; i < jobs; i++) JOBS = new Job(i, new byte[48], JOBS);
        for (int i = 0; i < queued; i++) QUEUE.add(new Ticket(i, "queued ticket " + i));
        System.gc();
        System.out.println("GROUND TRUTH: OPEN=" + OPEN.size() + " JOBS=" + jobs + " QUEUE=" + QUEUE.size());
        System.out.flush();
        Files.write(ready, String.valueOf(ProcessHandle.current().pid()).getBytes());
        Thread.sleep(Long.MAX_VALUE);
    }
}
