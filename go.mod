module github.com/heapx/heapx

go 1.26.8

require github.com/klauspost/compress v1.20.3 // indirect
