// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "channel_pool.h"

#include <grpcpp/support/client_interceptor.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <thread>

namespace rpclab {

Pick ParsePick(const std::string& s) {
  if (s == "round-robin") return Pick::kRoundRobin;
  if (s == "least-loaded") return Pick::kLeastLoaded;
  throw std::invalid_argument("rpclab::ChannelPool: unknown pick \"" + s + "\" (want round-robin or least-loaded)");
}

const char* PickName(Pick p) { return p == Pick::kLeastLoaded ? "least-loaded" : "round-robin"; }

int DefaultPoolSize() {
  int n = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(n, 2, 8);
}

void ChannelPool::Counts::Add(int i, int d) {
  int now = inflight[i].fetch_add(d, std::memory_order_relaxed) + d;
  if (observer != nullptr) observer->OnInFlight(i, now);
  if (total.fetch_add(d) + d == 0) {
    std::lock_guard<std::mutex> lk(mu);
    drained.notify_all();
  }
}

namespace {

using grpc::experimental::InterceptionHookPoints;

// Counts one RPC on channel i from the start of the call until its status
// arrives, or until the call is destroyed without one.
class CountingInterceptor : public grpc::experimental::Interceptor {
 public:
  CountingInterceptor(std::shared_ptr<ChannelPool::Counts> counts, int i) : counts_(std::move(counts)), i_(i) {}
  ~CountingInterceptor() override { End(); }
  void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
    if (m->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA) && !started_) {
      started_ = true;
      counts_->Add(i_, 1);
    }
    if (m->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_STATUS)) End();
    m->Proceed();
  }

 private:
  void End() {
    if (started_ && !ended_) {
      ended_ = true;
      counts_->Add(i_, -1);
    }
  }
  std::shared_ptr<ChannelPool::Counts> counts_;
  int i_;
  bool started_ = false, ended_ = false;
};

class CountingFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  CountingFactory(std::shared_ptr<ChannelPool::Counts> counts, int i) : counts_(std::move(counts)), i_(i) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*) override {
    return new CountingInterceptor(counts_, i_);
  }

 private:
  std::shared_ptr<ChannelPool::Counts> counts_;
  int i_;
};

}  // namespace

ChannelPool::ChannelPool(const std::string& target, int size, Pick pick, const grpc::ChannelArguments& args,
                         std::shared_ptr<grpc::ChannelCredentials> creds, PoolObserver* observer)
    : pick_(pick) {
  if (size < 1 || size > kMaxPoolSize) {
    throw std::invalid_argument("rpclab::ChannelPool: size " + std::to_string(size) + ": want 1 to " +
                                std::to_string(kMaxPoolSize) + " channels");
  }
  if (target.empty()) throw std::invalid_argument("rpclab::ChannelPool: empty target");
  if (creds == nullptr) {
    throw std::invalid_argument(
        "rpclab::ChannelPool: null credentials (want grpc::SslCredentials or grpc::InsecureChannelCredentials())");
  }
  counts_ = std::make_shared<Counts>(size, observer);
  for (int i = 0; i < size; i++) {
    grpc::ChannelArguments a = args;
    a.SetInt("rpclab.pool.channel", i);  // a distinct argument: a subchannel, a connection, of its own
    std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> f;
    f.push_back(std::make_unique<CountingFactory>(counts_, i));
    channels_.push_back(grpc::experimental::CreateCustomChannelWithInterceptors(target, creds, a, std::move(f)));
  }
  if (observer != nullptr) observer->OnSize(size);
}

ChannelPool::~ChannelPool() = default;

int ChannelPool::Choose() {
  int n = size();
  if (n == 1) return 0;
  int start = static_cast<int>(next_.fetch_add(1, std::memory_order_relaxed) % n);
  auto ready = [&](int i) { return channels_[i]->GetState(false) == GRPC_CHANNEL_READY; };
  int a = -1;
  for (int k = 0; k < n && a < 0; k++) {
    if (ready((start + k) % n)) a = (start + k) % n;
  }
  if (a < 0) return start;  // none READY: the next in turn (the call waits or fails there)
  if (pick_ == Pick::kRoundRobin) return a;
  std::vector<int> others;
  for (int k = 1; k < n; k++) {
    if (ready((a + k) % n)) others.push_back((a + k) % n);
  }
  if (others.empty()) return a;
  thread_local std::minstd_rand rng(std::random_device{}());
  int b = others[rng() % others.size()];
  auto load = [&](int i) { return counts_->inflight[i].load(std::memory_order_relaxed); };
  return load(b) < load(a) ? b : a;
}

ChannelPool::Lease ChannelPool::Acquire() {
  if (closed_.load()) throw std::logic_error("rpclab::ChannelPool: closed");
  int i = Choose();
  if (counts_->observer != nullptr) counts_->observer->OnPick(i);
  return Lease(i, channels_[i]);
}

bool ChannelPool::WaitForConnected(std::chrono::system_clock::time_point deadline) {
  for (const auto& ch : channels_) ch->GetState(true);
  for (const auto& ch : channels_) {
    if (!ch->WaitForConnected(deadline)) return false;
  }
  return true;
}

bool ChannelPool::Close(std::chrono::system_clock::time_point deadline) {
  closed_.store(true);
  std::unique_lock<std::mutex> lk(counts_->mu);
  return counts_->drained.wait_until(lk, deadline, [&] { return counts_->total.load() == 0; });
}

std::vector<int> ChannelPool::InFlight() const {
  std::vector<int> out;
  for (int i = 0; i < size(); i++) out.push_back(counts_->inflight[i].load());
  return out;
}

}  // namespace rpclab
