// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "channel_pool.h"

#include <climits>
#include <stdexcept>

namespace rpclab {

Pick ParsePick(const std::string& s) {
  if (s == "round-robin") return Pick::kRoundRobin;
  if (s == "least-loaded") return Pick::kLeastLoaded;
  throw std::invalid_argument("rpclab::ChannelPool: unknown pick \"" + s + "\" (want round-robin or least-loaded)");
}

const char* PickName(Pick p) { return p == Pick::kLeastLoaded ? "least-loaded" : "round-robin"; }

ChannelPool::Lease& ChannelPool::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    Release();
    counter_ = o.counter_;
    index_ = o.index_;
    channel_ = std::move(o.channel_);
    o.counter_ = nullptr;
  }
  return *this;
}

void ChannelPool::Lease::Release() {
  if (counter_ != nullptr) counter_->fetch_sub(1, std::memory_order_relaxed);
  counter_ = nullptr;
}

ChannelPool::ChannelPool(const std::string& target, int size, Pick pick, const grpc::ChannelArguments& args,
                         std::shared_ptr<grpc::ChannelCredentials> creds)
    : pick_(pick) {
  if (size < 1) {
    throw std::invalid_argument("rpclab::ChannelPool: size " + std::to_string(size) + ": want at least 1 channel");
  }
  if (target.empty()) throw std::invalid_argument("rpclab::ChannelPool: empty target");
  inflight_ = std::make_unique<std::atomic<int>[]>(size);
  for (int i = 0; i < size; i++) {
    grpc::ChannelArguments a = args;
    a.SetInt("rpclab.pool.channel", i);  // a distinct argument: a subchannel, a connection, of its own
    channels_.push_back(grpc::CreateCustomChannel(target, creds, a));
    inflight_[i] = 0;
  }
}

int ChannelPool::Choose() {
  int n = size();
  if (n == 1) return 0;
  int start = static_cast<int>(next_.fetch_add(1, std::memory_order_relaxed) % n);
  if (pick_ == Pick::kRoundRobin) return start;
  int best = start, least = INT_MAX;
  for (int k = 0; k < n && least > 0; k++) {
    int i = (start + k) % n;
    int load = inflight_[i].load(std::memory_order_relaxed);
    if (load < least) best = i, least = load;
  }
  return best;
}

ChannelPool::Lease ChannelPool::Acquire() {
  int i = Choose();
  inflight_[i].fetch_add(1, std::memory_order_relaxed);
  return Lease(&inflight_[i], i, channels_[i]);
}

bool ChannelPool::WaitForConnected(std::chrono::system_clock::time_point deadline) {
  for (const auto& ch : channels_) ch->GetState(true);
  for (const auto& ch : channels_) {
    if (!ch->WaitForConnected(deadline)) return false;
  }
  return true;
}

std::vector<int> ChannelPool::InFlight() const {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(channels_.size()); i++) out.push_back(inflight_[i].load());
  return out;
}

}  // namespace rpclab
