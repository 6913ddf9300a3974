// The classes ThreadsDemo.java loads with class loaders of its own:
// compiled into a directory that is not on its class path.
class Plugin {
    // 50,000 bytes each loader's copy of the class keeps.
    static final byte[] DATA = new byte[50_000];
}

class Widget {
    // 1,000,000 bytes the class keeps, and with it its loader.
    static final byte[] DATA = new byte[1_000_000];

    public Widget() {
    }
}
