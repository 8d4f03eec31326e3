! Builds an array of 1,000,000 integers (i*i mod 1000), sums it, prints the sum.
program sum_squares
    implicit none
    integer(8), parameter :: n = 1000000
    integer(8), allocatable :: values(:)
    integer(8) :: i
    allocate(values(n))
    do i = 1, n
        values(i) = mod((i - 1) * (i - 1), 1000_8)
    end do
    print '(i0)', sum(values)
    deallocate(values)
end program sum_squares
