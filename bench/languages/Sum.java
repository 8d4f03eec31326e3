// Builds an array of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
public class Sum {
    public static void main(String[] args) {
        final int n = 1_000_000;
        long[] values = new long[n];
        for (long i = 0; i < n; i++) values[(int) i] = i * i % 1000;
        long sum = 0;
        for (long v : values) sum += v;
        System.out.println(sum);
    }
}
