# Builds a list of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
values = [i * i % 1000 for i in range(1_000_000)]
print(sum(values))
