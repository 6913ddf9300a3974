// Keeps 2,000 more Ticket objects in a static list at each step and waits
// for a line on stdin between steps, so one JVM can be dumped several times.
import java.io.*;
import java.util.*;

public class TicketLeak {
    static final class Ticket {
        final int seq; final String owner; final int[] seats;
        Ticket(int seq, String owner) { this.seq = seq; this.owner = owner; this.seats = new int[] { seq % 40, seq % 7 }; }
    }
    static final List<Ticket> OPEN = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        int seq = 0;
        for (int step = 1; ; step++) {
            for (int i = 0; i < 2000; i++, seq++) OPEN.add(new Ticket(seq, "user-" + (seq % 300)));
            System.out.println("step " + step + " tickets " + OPEN.size());
            System.out.flush();
            if (in.readLine() == null) return;
        }
    }
}
