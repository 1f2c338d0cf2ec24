// A Java program for tests/jvm.bats: main calls hot() and cold() 70/30 (the
// work each does), forever, once JIT-compiled; prints "ready" first.
public class Split {
    static long sink;

    static long spin(int n) {
        long x = 0;
        for (int i = 0; i < n; i++)
            x += (long) i * i ^ (x >>> 3);
        return x;
    }

    static void hot() { sink += spin(700000); }

    static void cold() { sink += spin(300000); }

    public static void main(String[] args) {
        System.out.println("ready");
        System.out.flush();
        while (true) {
            hot();
            cold();
        }
    }
}
