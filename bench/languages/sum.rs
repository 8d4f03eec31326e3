// Builds a Vec of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
use std::hint::black_box;

fn main() {
    let values: Vec<i64> = (0..1_000_000i64).map(|i| i * i % 1000).collect();
    // Keeps the optimizer from fusing the loops and dropping the Vec.
    let values = black_box(values);
    let sum: i64 = values.iter().sum();
    println!("{}", sum);
}
