// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab::ChannelPool: N gRPC C++ channels to one target, each with its own
// subchannel (so its own TCP connection), handed out round robin or least
// loaded. C-core shares one subchannel, one connection, between channels made
// with identical arguments (the global subchannel pool); the pool gives
// channel i the distinct argument "rpclab.pool.channel"=i. See README.md.
#ifndef RPCLAB_POOL_CHANNEL_POOL_H_
#define RPCLAB_POOL_CHANNEL_POOL_H_

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace rpclab {

// How a pool picks a channel.
enum class Pick {
  kRoundRobin,   // each channel in turn
  kLeastLoaded,  // the fewest leases held (the first such after a round-robin cursor, so ties spread)
};

// ParsePick reads "round-robin" or "least-loaded"; else throws
// std::invalid_argument naming s.
Pick ParsePick(const std::string& s);
const char* PickName(Pick p);

class ChannelPool {
 public:
  // Counts one call in flight on a channel until destroyed (or moved from).
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept : counter_(o.counter_), index_(o.index_), channel_(std::move(o.channel_)) {
      o.counter_ = nullptr;
    }
    Lease& operator=(Lease&& o) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { Release(); }

    // The channel's index in channels(), and the channel.
    int index() const { return index_; }
    const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

   private:
    friend class ChannelPool;
    Lease(std::atomic<int>* counter, int index, std::shared_ptr<grpc::Channel> ch)
        : counter_(counter), index_(index), channel_(std::move(ch)) {}
    void Release();
    std::atomic<int>* counter_ = nullptr;
    int index_ = 0;
    std::shared_ptr<grpc::Channel> channel_;
  };

  // size channels to target, each made with args plus its own
  // "rpclab.pool.channel" argument. Throws std::invalid_argument naming the
  // value when size < 1 or target is empty.
  ChannelPool(const std::string& target, int size, Pick pick = Pick::kRoundRobin,
              const grpc::ChannelArguments& args = grpc::ChannelArguments(),
              std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials());

  // The channel for the next call, counted in flight until the lease ends:
  // hold it for the call (a stream: for the stream). Lock-free.
  Lease Acquire();
  // The next channel, not counted (round robin and least loaded alike pick
  // as Acquire does); for code that keeps no lease.
  std::shared_ptr<grpc::Channel> Next() { return Acquire().channel(); }
  // A new stub of Service on the next channel: FooService::NewStub's drop-in.
  template <typename Service>
  std::unique_ptr<typename Service::Stub> NewStub() {
    return Service::NewStub(Next());
  }

  // Waits until every channel is READY (connecting idle ones); false if one
  // is not by deadline.
  bool WaitForConnected(std::chrono::system_clock::time_point deadline);

  int size() const { return static_cast<int>(channels_.size()); }
  Pick pick() const { return pick_; }
  const std::vector<std::shared_ptr<grpc::Channel>>& channels() const { return channels_; }
  // The leases held per channel (a snapshot).
  std::vector<int> InFlight() const;

 private:
  int Choose();
  Pick pick_;
  std::vector<std::shared_ptr<grpc::Channel>> channels_;
  std::unique_ptr<std::atomic<int>[]> inflight_;
  std::atomic<uint64_t> next_{0};
};

}  // namespace rpclab

#endif  // RPCLAB_POOL_CHANNEL_POOL_H_
