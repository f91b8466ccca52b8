// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "channel_pool.h"

#include <grpcpp/support/client_interceptor.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>

namespace rpclab {
namespace detail {
struct Access {};
}  // namespace detail
}  // namespace rpclab

// The pool's channel forwards each RPC to the channel it picked. The hooks
// a channel offers stubs (CreateCall, CallbackCQ, ...) are private to
// grpc::ChannelInterface, which befriends every BlockingUnaryCallImpl<I, O>;
// this specialization for a type of the pool's own is how the pool calls
// them, and only the pool uses it.
namespace grpc {
namespace internal {
template <>
class BlockingUnaryCallImpl<rpclab::detail::Access, rpclab::detail::Access> {
 public:
  static Call CreateCall(ChannelInterface* ch, const RpcMethod& m, ClientContext* ctx, CompletionQueue* cq) {
    return ch->CreateCall(m, ctx, cq);
  }
  static CompletionQueue* CallbackCQ(ChannelInterface* ch) { return ch->CallbackCQ(); }
  static void NotifyOnStateChange(ChannelInterface* ch, grpc_connectivity_state last, gpr_timespec deadline,
                                  CompletionQueue* cq, void* tag) {
    ch->NotifyOnStateChangeImpl(last, deadline, cq, tag);
  }
  static bool WaitForStateChange(ChannelInterface* ch, grpc_connectivity_state last, gpr_timespec deadline) {
    return ch->WaitForStateChangeImpl(last, deadline);
  }
};
}  // namespace internal
}  // namespace grpc

namespace rpclab {

using Forward = grpc::internal::BlockingUnaryCallImpl<detail::Access, detail::Access>;
using grpc::experimental::InterceptionHookPoints;
using Steady = std::chrono::steady_clock;

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

namespace {

constexpr std::chrono::milliseconds kMaxRedialAfter = std::chrono::minutes(2);
constexpr std::chrono::seconds kDefaultDrain = std::chrono::seconds(5);

[[noreturn]] void Bad(const std::string& what) { throw std::invalid_argument("rpclab::ChannelPool: " + what); }

// docs/pool.md "Unparsable": whitespace or a control character; for a
// target without a scheme or with dns:, ipv4: or ipv6:, an empty host or a
// port that is not a number in 1..65535. Other schemes pass as they are.
void CheckTarget(const std::string& target) {
  if (target.empty()) Bad("empty target");
  for (unsigned char c : target) {
    if (std::isspace(c) || c < 0x20 || c == 0x7f)
      Bad("target \"" + target + "\" has whitespace or a control character");
  }
  std::string rest = target;
  std::vector<std::string> addrs;
  size_t colon = target.find(':');
  std::string scheme = colon == std::string::npos ? "" : target.substr(0, colon);
  if (scheme == "dns" || scheme == "ipv4" || scheme == "ipv6") {
    rest = target.substr(colon + 1);
    if (rest.rfind("//", 0) == 0) {
      size_t slash = rest.find('/', 2);
      rest = slash == std::string::npos ? "" : rest.substr(slash + 1);
    }
    if (scheme == "dns") {
      addrs.push_back(rest);
    } else {
      for (size_t start = 0;;) {
        size_t comma = rest.find(',', start);
        addrs.push_back(rest.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    }
  } else if (!scheme.empty() && std::isalpha(static_cast<unsigned char>(scheme[0])) &&
             scheme.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") ==
                 std::string::npos &&
             !(colon + 1 < target.size() && std::isdigit(static_cast<unsigned char>(target[colon + 1])))) {
    return;  // another scheme (unix:, xds:, a resolver's): gRPC's to judge
  } else if (std::count(target.begin(), target.end(), ':') > 1 && target[0] != '[') {
    return;  // a bare IPv6 address
  } else {
    addrs.push_back(target);
  }
  for (const std::string& a : addrs) {
    std::string host = a, port;
    bool has_port = false;
    if (!a.empty() && a[0] == '[') {
      size_t close = a.find(']');
      if (close == std::string::npos) Bad("target \"" + target + "\" has an unclosed [");
      host = a.substr(1, close - 1);
      if (close + 1 < a.size()) {
        if (a[close + 1] != ':') Bad("target \"" + target + "\" has text after ]");
        has_port = true;
        port = a.substr(close + 2);
      }
    } else if (size_t c = a.rfind(':'); c != std::string::npos) {
      host = a.substr(0, c);
      has_port = true;
      port = a.substr(c + 1);
    }
    if (host.empty()) Bad("target \"" + target + "\" has an empty host");
    if (has_port) {
      bool digits = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::stoi(port) < 1 || std::stoi(port) > 65535) {
        Bad("target \"" + target + "\": port \"" + port + "\" is not a number in 1..65535");
      }
    }
  }
}

void CheckOptions(const PoolOptions& o) {
  const std::string max = std::to_string(kMaxPoolSize);
  if (o.size < 1 || o.size > kMaxPoolSize) Bad("size " + std::to_string(o.size) + ": want 1 to " + max + " channels");
  if (o.max_connections != 0 && (o.max_connections < o.size || o.max_connections > kMaxPoolSize)) {
    Bad("max_connections " + std::to_string(o.max_connections) + ": want 0 (no growth) or " + std::to_string(o.size) +
        " (the size) to " + max);
  }
  if (o.streams_per_connection < 0) {
    Bad("streams_per_connection " + std::to_string(o.streams_per_connection) + ": want at least 1");
  }
  if (o.max_connections > o.size && o.streams_per_connection < 1) {
    Bad("streams_per_connection " + std::to_string(o.streams_per_connection) + ": growth (max_connections " +
        std::to_string(o.max_connections) +
        ") needs a per-connection stream limit of at least 1 (gRPC C++ does not expose the server's)");
  }
  if (o.idle_timeout.count() <= 0) Bad("idle_timeout " + std::to_string(o.idle_timeout.count()) + "ms: want above 0");
  if (o.redial_after.count() <= 0) Bad("redial_after " + std::to_string(o.redial_after.count()) + "ms: want above 0");
}

// One RPC as the pool's registry sees it, for close to cancel. The lock is
// recursive: a cancel may end the call on the cancelling thread.
struct LiveCall {
  std::recursive_mutex mu;
  grpc::ClientContext* ctx;
  bool ended = false;
  explicit LiveCall(grpc::ClientContext* c) : ctx(c) {}
};

}  // namespace

// The in-flight counts, shared with each channel's interceptors (which may
// outlive the pool): one slot per possible channel (max_connections).
struct Counts {
  Counts(int slots, PoolObserver* o)
      : inflight(new std::atomic<int>[slots]), idle_since(new std::atomic<int64_t>[slots]) {
    observer = o;
    for (int i = 0; i < slots; i++) {
      inflight[i] = 0;
      idle_since[i] = 0;
    }
  }
  std::unique_ptr<std::atomic<int>[]> inflight;
  std::unique_ptr<std::atomic<int64_t>[]> idle_since;  // steady ns when the slot's count last fell to 0
  PoolObserver* observer;
  std::mutex mu;
  std::condition_variable drained;
  int total = 0;                             // under mu
  std::set<std::shared_ptr<LiveCall>> live;  // under mu

  void Add(int i, int d) {
    int now = inflight[i].fetch_add(d) + d;
    if (now == 0) idle_since[i] = Steady::now().time_since_epoch().count();
    if (observer != nullptr) observer->OnInFlight(i, now);
    std::lock_guard<std::mutex> lk(mu);
    total += d;
    if (total == 0) drained.notify_all();
  }
  bool WaitDrained(std::chrono::system_clock::time_point deadline) {
    std::unique_lock<std::mutex> lk(mu);
    return drained.wait_until(lk, deadline, [&] { return total == 0; });
  }
  void CancelAll() {
    std::vector<std::shared_ptr<LiveCall>> calls;
    {
      std::lock_guard<std::mutex> lk(mu);
      calls.assign(live.begin(), live.end());
    }
    for (const auto& c : calls) {
      std::lock_guard<std::recursive_mutex> lk(c->mu);
      if (!c->ended) c->ctx->TryCancel();
    }
  }
};

namespace {

// A pick made by the pool's channel counts its RPC at once, under the
// pool's lock; the interceptor made for that RPC on the same thread takes
// the count over instead of counting again.
struct Pending {
  const Counts* counts = nullptr;
  int slot = -1;
};
thread_local Pending t_pending;

// Counts one RPC on slot i from its creation until its status arrives, or
// until the call is destroyed without one.
class CountingInterceptor : public grpc::experimental::Interceptor {
 public:
  CountingInterceptor(std::shared_ptr<Counts> counts, int i, grpc::ClientContext* ctx, bool counted)
      : counts_(std::move(counts)), i_(i), call_(std::make_shared<LiveCall>(ctx)) {
    if (!counted) counts_->Add(i_, 1);
    std::lock_guard<std::mutex> lk(counts_->mu);
    counts_->live.insert(call_);
  }
  ~CountingInterceptor() override { End(); }
  void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
    if (m->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_STATUS)) End();
    m->Proceed();
  }

 private:
  void End() {
    {
      std::lock_guard<std::recursive_mutex> lk(call_->mu);
      if (call_->ended) return;
      call_->ended = true;
    }
    {
      std::lock_guard<std::mutex> lk(counts_->mu);
      counts_->live.erase(call_);
    }
    counts_->Add(i_, -1);
  }
  std::shared_ptr<Counts> counts_;
  int i_;
  std::shared_ptr<LiveCall> call_;
};

class CountingFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  CountingFactory(std::shared_ptr<Counts> counts, int i) : counts_(std::move(counts)), i_(i) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo* info) override {
    bool counted = t_pending.counts == counts_.get() && t_pending.slot == i_;
    if (counted) t_pending = Pending();
    return new CountingInterceptor(counts_, i_, info->client_context(), counted);
  }

 private:
  std::shared_ptr<Counts> counts_;
  int i_;
};

// A closed pool's channel: every call is answered here with UNAVAILABLE
// (hijacked before it reaches the network, so it never connects).
class ClosedInterceptor : public grpc::experimental::Interceptor {
 public:
  void Intercept(grpc::experimental::InterceptorBatchMethods* m) override {
    bool hijack = m->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_INITIAL_METADATA);
    if (m->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) m->FailHijackedSendMessage();
    if (m->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_RECV_MESSAGE)) m->FailHijackedRecvMessage();
    if (m->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_RECV_STATUS)) {
      *m->GetRecvStatus() = grpc::Status(grpc::StatusCode::UNAVAILABLE, "rpclab::ChannelPool: the pool is closed");
    }
    if (hijack) {
      m->Hijack();
    } else {
      m->Proceed();
    }
  }
};

class ClosedFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  grpc::experimental::Interceptor* CreateClientInterceptor(grpc::experimental::ClientRpcInfo*) override {
    return new ClosedInterceptor();
  }
};

// Stands for "the pool's callback queue" between CallbackCQ and CreateCall,
// which swaps in the picked channel's own; never dereferenced.
alignas(grpc::CompletionQueue) char callback_cq_marker;
grpc::CompletionQueue* CallbackMarker() { return reinterpret_cast<grpc::CompletionQueue*>(&callback_cq_marker); }

bool Usable(grpc_connectivity_state s) { return s == GRPC_CHANNEL_READY || s == GRPC_CHANNEL_IDLE; }

// What a sweep leaves for after the pool's lock (destroying a channel, or
// resetting its back-off, runs gRPC's work): the channels to let go of,
// and the retiring ones whose back-off to reset.
struct Released {
  std::vector<std::shared_ptr<grpc::Channel>> drop, kick;
  void Finish() {
    for (const auto& ch : kick) grpc::experimental::ChannelResetConnectionBackoff(ch.get());
    kick.clear();
    drop.clear();
  }
};

}  // namespace

class ChannelPool::Core {
 public:
  Core(const std::string& target, std::shared_ptr<grpc::ChannelCredentials> creds, PoolOptions o)
      : target_(target), creds_(std::move(creds)), opts_(std::move(o)) {
    max_ = std::max(opts_.size, opts_.max_connections);
    tick_ = std::clamp<std::chrono::nanoseconds>(std::min(opts_.idle_timeout, opts_.redial_after) / 4,
                                                 std::chrono::milliseconds(5), std::chrono::seconds(1));
    counts_ = std::make_shared<Counts>(max_, opts_.observer);
    slots_.resize(max_);
    for (int i = 0; i < opts_.size; i++) slots_[i].ch = Make(i);
    active_ = opts_.size;
    if (opts_.observer != nullptr) opts_.observer->OnSize(active_);
    watcher_ = std::thread([this] { Watch(); });
  }
  ~Core() { StopWatcher(); }

  // Picks the channel for one RPC (counted at once when count); a closed
  // pool's channel (slot -1) once closed.
  std::pair<int, std::shared_ptr<grpc::Channel>> Take(bool count) {
    Released released;
    std::unique_lock<std::mutex> lk(mu_);
    if (closed_) return {-1, closed_ch_};
    int64_t now = Steady::now().time_since_epoch().count();
    std::vector<grpc_connectivity_state> st;
    std::vector<int> idx = Sweep(now, &st, &released);
    int chosen = -1;
    if (max_ > opts_.size) {
      std::vector<int> below;
      for (int i : idx) {
        if (counts_->inflight[i].load() < opts_.streams_per_connection) below.push_back(i);
      }
      if (below.empty() && active_ < max_) {
        chosen = Grow(now);
      } else if (!below.empty()) {
        idx.swap(below);
      }
    }
    if (chosen < 0) chosen = Choose(idx, st);
    if (count) {
      counts_->Add(chosen, 1);
      t_pending = Pending{counts_.get(), chosen};
    }
    if (opts_.observer != nullptr) opts_.observer->OnPick(chosen);
    auto ch = slots_[chosen].ch;
    lk.unlock();
    released.Finish();
    return {chosen, ch};
  }

  bool Close(std::chrono::system_clock::time_point drain_deadline) {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (closed_) return true;
      closed_ = true;
      closed_ch_ = NewChannel(-1);
    }
    StopWatcher();
    bool drained = counts_->WaitDrained(drain_deadline);
    if (!drained) {
      counts_->CancelAll();
      counts_->WaitDrained(std::chrono::system_clock::now() + kDefaultDrain);
    }
    std::vector<std::shared_ptr<grpc::Channel>> all;
    {
      std::lock_guard<std::mutex> lk(mu_);
      for (Slot& s : slots_) {
        if (s.ch) all.push_back(std::move(s.ch));
        s = Slot();
      }
      for (Retiring& r : retiring_) all.push_back(std::move(r.ch));
      retiring_.clear();
      active_ = 0;
      if (opts_.observer != nullptr) opts_.observer->OnSize(0);
    }
    all.clear();  // every channel at once
    return drained;
  }

  std::vector<std::shared_ptr<grpc::Channel>> Channels() const {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<std::shared_ptr<grpc::Channel>> out;
    for (const Slot& s : slots_) {
      if (s.ch) out.push_back(s.ch);
    }
    return out;
  }
  std::vector<int> InFlight() const {
    std::lock_guard<std::mutex> lk(mu_);
    std::vector<int> out;
    for (int i = 0; i < max_; i++) {
      if (slots_[i].ch) out.push_back(counts_->inflight[i].load());
    }
    return out;
  }
  int Size() const {
    std::lock_guard<std::mutex> lk(mu_);
    return active_;
  }
  bool Closed() const {
    std::lock_guard<std::mutex> lk(mu_);
    return closed_;
  }
  int Redials() const {
    std::lock_guard<std::mutex> lk(mu_);
    return redials_;
  }
  int Resizes() const {
    std::lock_guard<std::mutex> lk(mu_);
    return resizes_;
  }
  const PoolOptions& options() const { return opts_; }
  // After a counted pick's call was made: gives the count back if no
  // interceptor took it over (each of the pool's channels has one).
  void Unclaimed(int slot) {
    if (slot >= 0 && t_pending.counts == counts_.get() && t_pending.slot == slot) {
      t_pending = Pending();
      counts_->Add(slot, -1);
    }
  }

  // The state of the pool as one channel: gRPC's round_robin rule (READY if
  // any is, then CONNECTING, IDLE, TRANSIENT_FAILURE; SHUTDOWN once closed).
  grpc_connectivity_state State(bool try_to_connect) {
    auto chans = States(try_to_connect);
    if (chans.empty()) return GRPC_CHANNEL_SHUTDOWN;
    std::set<grpc_connectivity_state> got;
    for (const auto& [ch, st] : chans) got.insert(st);
    for (auto s : {GRPC_CHANNEL_READY, GRPC_CHANNEL_CONNECTING, GRPC_CHANNEL_IDLE}) {
      if (got.count(s)) return s;
    }
    return GRPC_CHANNEL_TRANSIENT_FAILURE;
  }
  // Waits until every channel of the pool is READY, connecting the others.
  // The channels are read again after each change of state and at least
  // every tick, so a channel replaced meanwhile is neither connected nor
  // waited on: its replacement is.
  bool WaitForConnected(std::chrono::system_clock::time_point deadline) {
    for (;;) {
      auto chans = States(true);
      if (chans.empty()) return false;  // closed
      auto waiting =
          std::find_if(chans.begin(), chans.end(), [](const auto& c) { return c.second != GRPC_CHANNEL_READY; });
      if (waiting == chans.end()) return true;
      auto now = std::chrono::system_clock::now();
      if (now >= deadline) return false;
      auto until = now + std::chrono::duration_cast<std::chrono::system_clock::duration>(tick_);
      waiting->first->WaitForStateChange(waiting->second, std::min(deadline, until));
    }
  }

  std::shared_ptr<grpc::Channel> First() {
    std::lock_guard<std::mutex> lk(mu_);
    return closed_ ? closed_ch_ : slots_[0].ch;
  }

 private:
  struct Slot {
    std::shared_ptr<grpc::Channel> ch;
    bool grown = false;
    int64_t tf_since = -1;  // steady ns when TRANSIENT_FAILURE was first seen; -1: not in it
    int64_t delay = 0;      // the redial delay now (ns); 0: the configured one
  };
  struct Retiring {
    std::shared_ptr<grpc::Channel> ch;
    int slot;
  };

  static int64_t Nanos(std::chrono::nanoseconds d) { return d.count(); }

  // The pool's channels (none once closed) and their states. With
  // try_to_connect, GetState(true) runs outside mu_ (it may run gRPC
  // callbacks, which may start RPCs on the pool) while no channel is
  // replaced or retired, so that none is connected after the pool let go
  // of it.
  std::vector<std::pair<std::shared_ptr<grpc::Channel>, grpc_connectivity_state>> States(bool try_to_connect) {
    std::vector<std::pair<std::shared_ptr<grpc::Channel>, grpc_connectivity_state>> out;
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (closed_) return out;
      for (const Slot& s : slots_) {
        if (s.ch) out.emplace_back(s.ch, GRPC_CHANNEL_SHUTDOWN);
      }
      if (try_to_connect) kicking_++;
    }
    for (auto& [ch, st] : out) st = ch->GetState(try_to_connect);
    if (try_to_connect) {
      std::lock_guard<std::mutex> lk(mu_);
      kicking_--;
    }
    return out;
  }

  // Retires idle grown channels, redials failed ones and lets go of the
  // retiring channels that settled (under mu_); the indexes of the
  // channels left, with their states in (*st)[i].
  std::vector<int> Sweep(int64_t now, std::vector<grpc_connectivity_state>* st, Released* released) {
    for (auto it = retiring_.begin(); it != retiring_.end();) {
      if (Settled(it->ch->GetState(false))) {
        released->drop.push_back(std::move(it->ch));
        it = retiring_.erase(it);
      } else {
        ++it;
      }
    }
    std::vector<int> idx;
    st->assign(max_, GRPC_CHANNEL_SHUTDOWN);
    for (int i = 0; i < max_; i++) {
      Slot& s = slots_[i];
      if (!s.ch) continue;
      if (s.grown && kicking_ == 0 && counts_->inflight[i].load() == 0 &&
          now - counts_->idle_since[i].load() >= Nanos(opts_.idle_timeout)) {
        Retire(i, std::move(s.ch), released);
        s = Slot();
        active_--;
        Resized("shrink");
        continue;
      }
      (*st)[i] = s.ch->GetState(false);
      Redial(i, (*st)[i], now, released);
      idx.push_back(i);
    }
    return idx;
  }

  // The watcher: sweeps between picks, so that a grown channel is retired
  // and a failed one redialled without an RPC to notice, every quarter of
  // the shorter of the idle time and the redial delay (5 ms to 1 s).
  void Watch() {
    std::unique_lock<std::mutex> lk(mu_);
    while (!stop_) {
      watch_cv_.wait_for(lk, tick_, [&] { return stop_; });
      if (stop_ || closed_) break;
      Released released;
      std::vector<grpc_connectivity_state> st;
      Sweep(Steady::now().time_since_epoch().count(), &st, &released);
      lk.unlock();
      released.Finish();
      lk.lock();
    }
  }
  void StopWatcher() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    watch_cv_.notify_all();
    if (watcher_.joinable() && watcher_.get_id() != std::this_thread::get_id()) watcher_.join();
  }

  std::shared_ptr<grpc::Channel> NewChannel(int slot) {
    grpc::ChannelArguments a = opts_.args;
    std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> f;
    if (slot < 0) {
      f.push_back(std::make_unique<ClosedFactory>());
    } else {
      // A subchannel pool of the channel's own: its own connection, and a
      // redialled channel a fresh one with fresh back-off.
      a.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
      a.SetInt("rpclab.pool.channel", slot);
      f.push_back(std::make_unique<CountingFactory>(counts_, slot));
    }
    return grpc::experimental::CreateCustomChannelWithInterceptors(target_, creds_, a, std::move(f));
  }
  std::shared_ptr<grpc::Channel> Make(int slot) {
    counts_->idle_since[slot] = Steady::now().time_since_epoch().count();
    return NewChannel(slot);
  }

  // Redial: a channel in TRANSIENT_FAILURE for its delay is replaced; the
  // delay doubles (up to 2 minutes) and returns to the configured one once
  // the channel is READY.
  void Redial(int i, grpc_connectivity_state& st, int64_t now, Released* released) {
    Slot& s = slots_[i];
    int64_t base = Nanos(opts_.redial_after);
    if (s.delay == 0) s.delay = base;
    if (st != GRPC_CHANNEL_TRANSIENT_FAILURE) {
      s.tf_since = -1;
      if (st == GRPC_CHANNEL_READY) s.delay = base;
      return;
    }
    if (s.tf_since < 0) {
      s.tf_since = now;
      return;
    }
    if (now - s.tf_since < s.delay || kicking_ > 0) return;  // while kicking: at the next sweep
    Retire(i, std::move(s.ch), released);
    s.ch = NewChannel(i);
    s.tf_since = -1;
    s.delay = std::min(2 * s.delay, Nanos(kMaxRedialAfter));
    st = GRPC_CHANNEL_IDLE;
    redials_++;
    if (opts_.observer != nullptr) opts_.observer->OnRedial();
  }

  // READY, IDLE or SHUTDOWN: no connection attempt of the channel's own is under way.
  static bool Settled(grpc_connectivity_state s) { return Usable(s) || s == GRPC_CHANNEL_SHUTDOWN; }

  // Lets go of a channel the pool no longer picks (one replaced, or a grown
  // one retired) once no connection attempt of its own is under way. gRPC C++
  // 1.51 leaks the connection of an attempt that completes after its
  // channel was destroyed (the server's SETTINGS arriving once the channel
  // let go of its subchannel; grpc/grpc#32071): it stays open with nothing
  // to close it. So a channel CONNECTING, or in TRANSIENT_FAILURE (which
  // pick_first keeps while it retries), is kept in retiring_, its back-off
  // reset so that it tries at once, until it is READY or IDLE; then its
  // connection closes with it. At most one per slot: an older one of the
  // slot still failing after a whole redial delay is let go.
  void Retire(int slot, std::shared_ptr<grpc::Channel> ch, Released* released) {
    if (Settled(ch->GetState(false))) {
      released->drop.push_back(std::move(ch));
      return;
    }
    for (auto it = retiring_.begin(); it != retiring_.end(); ++it) {
      if (it->slot == slot) {
        released->drop.push_back(std::move(it->ch));
        retiring_.erase(it);
        break;
      }
    }
    released->kick.push_back(ch);
    retiring_.push_back(Retiring{std::move(ch), slot});
  }

  int Grow(int64_t now) {
    int i = opts_.size;
    while (slots_[i].ch) i++;
    slots_[i].ch = Make(i);
    slots_[i].grown = true;
    counts_->idle_since[i] = now;
    active_++;
    Resized("grow");
    return i;
  }

  void Resized(const char* direction) {
    resizes_++;
    if (opts_.observer != nullptr) {
      opts_.observer->OnResize(direction);
      opts_.observer->OnSize(active_);
    }
  }

  // The policy among idx: the READY or IDLE ones when there is one, else all.
  int Choose(const std::vector<int>& idx, const std::vector<grpc_connectivity_state>& st) {
    std::vector<int> cands;
    for (int i : idx) {
      if (Usable(st[i])) cands.push_back(i);
    }
    if (cands.empty()) cands = idx;
    size_t n = cands.size();
    uint64_t turn = next_++;
    if (opts_.pick == rpclab::Pick::kRoundRobin || n == 1) return cands[turn % n];
    size_t a = rng_() % n, b = rng_() % (n - 1);
    if (b >= a) b++;
    int x = cands[a], y = cands[b];
    return counts_->inflight[y].load() < counts_->inflight[x].load() ? y : x;
  }

  const std::string target_;
  const std::shared_ptr<grpc::ChannelCredentials> creds_;
  const PoolOptions opts_;
  int max_;
  std::shared_ptr<Counts> counts_;
  mutable std::mutex mu_;
  std::vector<Slot> slots_;  // under mu_, as the rest
  int active_ = 0;
  bool closed_ = false;
  std::shared_ptr<grpc::Channel> closed_ch_;
  uint64_t next_ = 0;
  std::minstd_rand rng_{std::random_device{}()};
  int redials_ = 0, resizes_ = 0;
  std::vector<Retiring> retiring_;  // replaced or retired channels not settled yet
  int kicking_ = 0;                 // States(true) calls under way: no channel is replaced or retired
  std::chrono::nanoseconds tick_;   // the watcher's period
  bool stop_ = false;
  std::condition_variable watch_cv_;
  std::thread watcher_;  // last: started when the rest is made
};

namespace {

// The pool as a grpc::ChannelInterface: each call goes to the channel the
// pool picks when the call is created.
class PoolChannel final : public grpc::ChannelInterface {
 public:
  explicit PoolChannel(std::shared_ptr<ChannelPool::Core> core) : core_(std::move(core)) {}
  grpc_connectivity_state GetState(bool try_to_connect) override { return core_->State(try_to_connect); }

 private:
  grpc::internal::Call CreateCall(const grpc::internal::RpcMethod& method, grpc::ClientContext* ctx,
                                  grpc::CompletionQueue* cq) override {
    auto [slot, ch] = core_->Take(true);
    if (cq == CallbackMarker()) cq = Forward::CallbackCQ(ch.get());
    grpc::internal::Call call = Forward::CreateCall(ch.get(), method, ctx, cq);
    core_->Unclaimed(slot);
    return call;
  }
  // The call's own channel performs its operations.
  void PerformOpsOnCall(grpc::internal::CallOpSetInterface* ops, grpc::internal::Call* call) override {
    call->PerformOps(ops);
  }
  // Methods are created by name on the picked channel.
  void* RegisterMethod(const char*) override { return nullptr; }
  void NotifyOnStateChangeImpl(grpc_connectivity_state last, gpr_timespec deadline, grpc::CompletionQueue* cq,
                               void* tag) override {
    Forward::NotifyOnStateChange(core_->First().get(), last, deadline, cq, tag);
  }
  bool WaitForStateChangeImpl(grpc_connectivity_state last, gpr_timespec deadline) override {
    return Forward::WaitForStateChange(core_->First().get(), last, deadline);
  }
  grpc::CompletionQueue* CallbackCQ() override { return CallbackMarker(); }

  std::shared_ptr<ChannelPool::Core> core_;
};

PoolOptions LegacyOptions(int size, Pick pick, const grpc::ChannelArguments& args, PoolObserver* observer) {
  PoolOptions o;
  o.size = size;
  o.pick = pick;
  o.args = args;
  o.observer = observer;
  return o;
}

}  // namespace

ChannelPool::ChannelPool(const std::string& target, std::shared_ptr<grpc::ChannelCredentials> creds,
                         PoolOptions options) {
  CheckTarget(target);
  if (creds == nullptr) {
    Bad("null credentials (want grpc::SslCredentials or grpc::InsecureChannelCredentials())");
  }
  CheckOptions(options);
  core_ = std::make_shared<Core>(target, std::move(creds), std::move(options));
  channel_ = std::make_shared<PoolChannel>(core_);
}

ChannelPool::ChannelPool(const std::string& target, int size, Pick pick, const grpc::ChannelArguments& args,
                         std::shared_ptr<grpc::ChannelCredentials> creds, PoolObserver* observer)
    : ChannelPool(target, std::move(creds), LegacyOptions(size, pick, args, observer)) {}

ChannelPool::~ChannelPool() {
  if (core_) core_->Close(std::chrono::system_clock::now());
}

ChannelPool::Lease ChannelPool::Acquire() {
  auto [slot, ch] = core_->Take(false);
  return Lease(slot, std::move(ch));
}

bool ChannelPool::WaitForConnected(std::chrono::system_clock::time_point deadline) {
  return core_->WaitForConnected(deadline);
}

bool ChannelPool::Close(std::chrono::system_clock::time_point drain_deadline) { return core_->Close(drain_deadline); }
bool ChannelPool::Close() { return Close(std::chrono::system_clock::now() + kDefaultDrain); }
bool ChannelPool::closed() const { return core_->Closed(); }
std::vector<std::shared_ptr<grpc::Channel>> ChannelPool::channels() const { return core_->Channels(); }
int ChannelPool::size() const { return core_->Size(); }
Pick ChannelPool::pick() const { return core_->options().pick; }
std::vector<int> ChannelPool::InFlight() const { return core_->InFlight(); }
int ChannelPool::redials() const { return core_->Redials(); }
int ChannelPool::resizes() const { return core_->Resizes(); }

}  // namespace rpclab
