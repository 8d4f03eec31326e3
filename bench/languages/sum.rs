// Builds a Vec of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
fn main() {
    let values: Vec<i64> = (0..1_000_000i64).map(|i| i * i % 1000).collect();
    // Keeps the optimizer from fusing the loops and dropping the Vec: an empty
    // asm! that may read any memory, as in sum.c (std::hint::black_box needs
    // Rust 1.66, newer than Debian 12's rustc 1.63).
    unsafe { std::arch::asm!("/* {0} */", in(reg) values.as_ptr(), options(nostack, preserves_flags)) };
    let sum: i64 = values.iter().sum();
    println!("{}", sum);
}
