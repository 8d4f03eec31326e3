-- Builds a table of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
local values = {}
for i = 0, 999999 do values[i + 1] = i * i % 1000 end
local sum = 0
for i = 1, #values do sum = sum + values[i] end
print(sum)
