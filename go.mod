module github.com/heapx/heapx

go 1.26.8
