// Threads whose frames hold known objects in their locals, and class
// loaders: the shapes MAT's Thread Overview and class-loader views answer.
// Run with one argument, a directory holding Plugin.class and Widget.class
// compiled from PluginSources.java (and not on the class path); it prints
// what it holds, one fact a line, then "ready" and waits for a line on
// stdin, so that it can be dumped (jcmd PID GC.heap_dump) in that state.
// A frame's fact is "holds THREAD CLASS.METHOD LINE TYPE COUNT": the
// frame of that method, blocked at that line, holds in a local an object
// of that type with COUNT elements. "defines LOADER CLASS": the class
// loader named LOADER defined CLASS; "caches LOADER CLASS": the static
// map CACHE holds an instance of CLASS, defined by LOADER, which nothing
// else holds.
//
//   holder   a thread blocked in hold(), whose local `items` is an
//            ArrayList of 1,000 Item (one int field each), created with
//            capacity 1,000, held by nothing else
//   nested   a thread blocked two calls deep: outer() holds a HashMap of
//            50 entries, inner() a byte[100000]
//   loaders  two URLClassLoaders (held by the static list LOADERS) that
//            each define Plugin themselves (no parent), and a third that
//            defines Widget and that nothing holds but the Widget
//            instance kept in the static map CACHE
import java.io.*;
import java.net.*;
import java.util.*;
import java.util.concurrent.*;

public class ThreadsDemo {
    static final class Item {
        final int n;
        Item(int n) { this.n = n; }
    }

    static final List<ClassLoader> LOADERS = new ArrayList<>();
    static final Map<String, Object> CACHE = new HashMap<>();
    static final CountDownLatch HELD = new CountDownLatch(2);

    static void hold() throws InterruptedException {
        ArrayList<Item> items = new ArrayList<>(1000);
        for (int i = 0; i < 1000; i++) items.add(new Item(i));
        says(new Throwable(), items, items.size()); HELD.countDown(); Thread.sleep(Long.MAX_VALUE); // HOLD-LINE
        System.out.println(items.size());
    }

    static void outer() throws InterruptedException {
        HashMap<String, Integer> table = new HashMap<>();
        for (int i = 0; i < 50; i++) table.put("key-" + i, i);
        says(new Throwable(), table, table.size()); inner(table.size());
        System.out.println(table.size());
    }

    static void inner(int size) throws InterruptedException {
        byte[] buffer = new byte[100_000];
        buffer[0] = (byte) size;
        says(new Throwable(), buffer, buffer.length); HELD.countDown(); Thread.sleep(Long.MAX_VALUE); // INNER-LINE
        System.out.println(buffer[0]);
    }

    // cacheWidget keeps a Widget in CACHE, and through its class the
    // loader "widgets", which nothing else holds once this returns.
    static void cacheWidget(URL dir) throws Exception {
        URLClassLoader widgets = new URLClassLoader("widgets", new URL[] { dir }, null);
        java.lang.reflect.Constructor<?> k = widgets.loadClass("Widget").getDeclaredConstructor();
        k.setAccessible(true);
        CACHE.put("widget", k.newInstance());
        System.out.println("defines widgets Widget");
    }

    // says prints the fact that the frame where here was made holds held.
    static void says(Throwable here, Object held, int count) {
        StackTraceElement at = here.getStackTrace()[0];
        System.out.println("holds " + Thread.currentThread().getName() + " " + at.getClassName() + "." + at.getMethodName() + " "
            + at.getLineNumber() + " " + held.getClass().getTypeName() + " " + count);
    }

    static Thread start(String name, Callable<Void> body) {
        Thread t = new Thread(() -> {
            try {
                body.call();
            } catch (Exception e) {
                // interrupted: the program ends
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    public static void main(String[] args) throws Exception {
        URL dir = new File(args[0]).toURI().toURL();
        for (int i = 0; i < 2; i++) {
            URLClassLoader l = new URLClassLoader("plugins-" + i, new URL[] { dir }, null);
            Class<?> c = Class.forName("Plugin", true, l); // initialized: DATA is made
            if (c.getClassLoader() == l) System.out.println("defines " + l.getName() + " " + c.getName());
            LOADERS.add(l);
        }
        cacheWidget(dir);
        System.out.println("caches widgets Widget");

        start("holder", () -> { hold(); return null; });
        start("nested", () -> { outer(); return null; });
        HELD.await();
        System.out.println("ready");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
    }
}
