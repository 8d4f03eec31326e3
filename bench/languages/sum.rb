# Builds an array of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
values = Array.new(1_000_000) { |i| i * i % 1000 }
puts values.sum
