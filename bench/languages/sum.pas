{ Builds an array of 1,000,000 integers (i*i mod 1000), sums it, prints the sum. }
program SumSquares;
const
  N = 1000000;
var
  values: array of Int64;
  i: Int64;
  total: Int64;
begin
  SetLength(values, N);
  for i := 0 to N - 1 do
    values[i] := i * i mod 1000;
  total := 0;
  for i := 0 to N - 1 do
    total := total + values[i];
  WriteLn(total);
end.
