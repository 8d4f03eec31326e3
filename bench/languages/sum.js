// Builds an array of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
const values = [];
for (let i = 0; i < 1_000_000; i++) values.push((i * i) % 1000);
let sum = 0;
for (const v of values) sum += v;
console.log(sum);
