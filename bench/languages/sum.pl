# Builds an array of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
use strict;
use warnings;

my @values;
push @values, $_ * $_ % 1000 for 0 .. 999_999;
my $sum = 0;
$sum += $_ for @values;
print "$sum\n";
