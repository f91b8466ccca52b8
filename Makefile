# rpclab: the two commands a fresh machine needs are `make demo` and `make test`.

GO  ?= go
BIN := bin/rpclab

.PHONY: demo test build setup vet bench proto clean

## demo: build rpclab and run the one-minute demo against its own servers: the
## loopback sweep, then a server that allows one stream per connection.
demo: build
	./$(BIN) demo

build:
	$(GO) build -o $(BIN) ./cmd/rpclab

## test: install what the suite needs (Debian packages, language toolchains'
## dependencies), then vet and test everything, every language's client included.
test: setup
	scripts/test.sh

## setup: install the Debian packages the full suite needs (idempotent).
setup:
	scripts/setup.sh

vet:
	scripts/vet.sh

## bench: the micro-benchmarks (recording path, pool pick path, pool throughput).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/stats
	cd pool && $(GO) test -run '^$$' -bench . -benchmem .

## proto: regenerate the Go code from proto/.
proto:
	scripts/genproto.sh

clean:
	rm -rf bin .tools clients/cpp/build clients/rust/target clients/java/target clients/node/node_modules clients/python/.venv
