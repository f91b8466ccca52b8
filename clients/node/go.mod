// Not Go code: this file keeps npm's node_modules (some packages ship Go
// sources) out of the root module, so `go test ./...` does not build them.
module github.com/rpclab/rpclab/clients/node

go 1.26
