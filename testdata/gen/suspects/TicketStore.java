// A Java program that keeps 12,000 tickets in a static HashMap and never removes one,
// for the leak-suspects fixture testdata/suspects/java-tickets.hprof.gz (see testdata/gen/README.md).
// Usage: java TicketStore <tickets> <readyFile>
// After building its heap it writes <readyFile> (its pid) and sleeps until it is dumped and killed.
import java.nio.file.*;
import java.util.*;

public class TicketStore {
    static final class Ticket {
        final long id; final String subject; final String reporter; final byte[] attachment; final List<String> comments = new ArrayList<>();
        Ticket(long id, String subject, String reporter, byte[] attachment) { this.id = id; this.subject = subject; this.reporter = reporter; this.attachment = attachment; }
    }
    // The leak: every ticket ever opened stays here.
    static final Map<String, Ticket> TICKETS = new HashMap<>();

    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        Path ready = Paths.get(args[1]);
        Random rnd = new Random(7);
        for (int i = 0; i < n; i++) {
            byte[] att = new byte[256 + rnd.nextInt(256)];
            Arrays.fill(att, (byte) i); // compressible, so the fixture stays small
            Ticket t = new Ticket(i, "subject of ticket " + i, "user" + (i % 97), att);
            for (int c = 0; c < 2; c++) t.comments.add("comment " + c + " on " + i);
            TICKETS.put("T-" + i, t);
        }
        System.gc();
        System.out.println("GROUND TRUTH: TicketStore$Ticket=" + TICKETS.size());
        System.out.flush();
        Files.write(ready, String.valueOf(ProcessHandle.current().pid()).getBytes());
        Thread.sleep(Long.MAX_VALUE);
    }
}
