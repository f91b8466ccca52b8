// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// pool-example TARGET [CALLS]: a pool of 4 connections to TARGET (e.g.
// `rpclab serve`'s address) that sends CALLS unary calls of
// grpc.testing.BenchmarkService/UnaryCall (an empty SimpleRequest, through
// one grpc::GenericStub on the pool as a channel, so this example needs no
// generated code; each call picks its channel), closes the pool and prints
// "ok N" when all succeeded.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <rpclab/channel_pool.h>

#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pool-example TARGET [CALLS]\n");
    return 2;
  }
  int calls = argc > 2 ? std::atoi(argv[2]) : 100;
  rpclab::ChannelPool pool(argv[1], 4, rpclab::Pick::kLeastLoaded, grpc::ChannelArguments(),
                           grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(pool.channel());
  for (int i = 0; i < calls; i++) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::Slice empty("");  // an empty message: a SimpleRequest with every field unset
    grpc::ByteBuffer req(&empty, 1), resp;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&ctx, "/grpc.testing.BenchmarkService/UnaryCall", grpc::StubOptions(), &req, &resp,
                   [&done](grpc::Status s) { done.set_value(s); });
    grpc::Status s = done.get_future().get();
    if (!s.ok()) {
      std::fprintf(stderr, "call %d: %s\n", i, s.error_message().c_str());
      return 1;
    }
  }
  if (!pool.Close()) return 1;
  std::printf("ok %d\n", calls);
  return 0;
}
