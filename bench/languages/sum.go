// Builds a slice of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
package main

import "fmt"

func main() {
	const n = 1_000_000
	values := make([]int64, n)
	for i := int64(0); i < n; i++ {
		values[i] = i * i % 1000
	}
	var sum int64
	for _, v := range values {
		sum += v
	}
	fmt.Println(sum)
}
