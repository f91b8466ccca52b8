// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

// rpclab's C++ server: the classic asynchronous completion-queue server of
// gRPC C++ for grpc.testing.BenchmarkService's UnaryCall and StreamingCall
// (bidi ping-pong), each reply carrying response_size bytes, and for YDB's
// Ydb.Debug.V1.DebugService's PingPlainGrpc and PingStream (bidi ping-pong),
// each reply carrying the server's time in CallBackTs (µs since the epoch),
// and for rpclab.v1.UsageService's Usage: the process's own CPU time, CPUs
// and pid, which rpclab sweep reads at each step's start and end (the
// record's server_cpu), as rpclab serve answers it (server/usage.go).
// Its first line on stdout is "listening on ADDR"; SIGINT or SIGTERM stops it.
//
// Layout: --num-cqs completion queues, each polled by --workers-per-cq
// threads. Each queue has --callbacks-per-cq handlers per method pre-posted
// (RequestUnaryCall / RequestStreamingCall); a handler re-arms itself when
// its call ends, and when a call takes the last posted handler of its queue
// (long-lived streams), one more is posted, so no call waits for a handler.

#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "flags.h"
#include "grpc/testing/benchmark_service.grpc.pb.h"
#include "rpclab/v1/usage.grpc.pb.h"
#include "ydb/debug/v1/debug.grpc.pb.h"

namespace rpclab {
namespace {

using grpc::testing::BenchmarkService;
using grpc::testing::SimpleRequest;
using grpc::testing::SimpleResponse;
using rpclab::v1::UsageRequest;
using rpclab::v1::UsageResponse;
using rpclab::v1::UsageService;
using Ydb::Debug::V1::DebugService;
using Ydb::Debug::V1::PlainGrpcRequest;
using Ydb::Debug::V1::PlainGrpcResponse;

constexpr int64_t kMaxResponse = (int64_t{4} << 20) - 64;

struct Queue;

// A handler is the tag of its one outstanding operation.
class Handler {
 public:
  virtual ~Handler() = default;
  // Proceed moves the call on after an operation completed.
  virtual void Proceed(bool ok) = 0;
};

// A completion queue and the handlers posted on it.
struct Queue {
  std::tuple<BenchmarkService::AsyncService*, DebugService::AsyncService*, UsageService::AsyncService*> services;
  std::unique_ptr<grpc::ServerCompletionQueue> cq;
  std::atomic<int> posted[5] = {};  // handlers waiting for a call, by Method's id
  std::mutex mu;
  std::vector<std::unique_ptr<Handler>> handlers;  // owned here, freed after the queue drains

  template <typename H>
  void Add() {
    H* h = new H(this);
    {
      std::lock_guard<std::mutex> lk(mu);
      handlers.emplace_back(h);
    }
    h->Arm();
  }
};

bool FillResponse(const SimpleRequest& req, SimpleResponse* resp, grpc::Status* err) {
  int64_t n = req.response_size();
  if (n < 0 || n > kMaxResponse) {
    *err = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "response_size " + std::to_string(n) + " is outside 0.." + std::to_string(kMaxResponse));
    return false;
  }
  if (n == 0) {
    resp->clear_payload();
  } else {
    resp->mutable_payload()->mutable_body()->assign(static_cast<size_t>(n), '\0');  // keeps its capacity
  }
  return true;
}

// YDB's pings carry the server's time, as YDB's ping server stamps them.
bool StampResponse(const PlainGrpcRequest&, PlainGrpcResponse* resp, grpc::Status*) {
  resp->set_callbackts(static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count()));
  return true;
}

// AllowedCpus is how many CPUs this process may run on (its affinity mask);
// the online CPUs if the mask cannot be read.
int AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 1) {
    return static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  }
  return CPU_COUNT(&set);
}

// The server's own usage, as server/usage.go answers it: user+system CPU
// time of the whole process (getrusage RUSAGE_SELF) in ns, the CPUs it may
// run on now (rpclab may pin it), its pid. Unimplemented if getrusage fails,
// so the load generator records no server_cpu rather than a wrong one.
bool FillUsage(const UsageRequest&, UsageResponse* resp, grpc::Status* err) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) {
    *err = grpc::Status(grpc::StatusCode::UNIMPLEMENTED, std::string("getrusage: ") + std::strerror(errno));
    return false;
  }
  auto ns = [](const timeval& tv) { return int64_t{tv.tv_sec} * 1000000000 + int64_t{tv.tv_usec} * 1000; };
  resp->set_cpu_ns(ns(ru.ru_utime) + ns(ru.ru_stime));
  resp->set_cpus(AllowedCpus());
  resp->set_pid(static_cast<int64_t>(getpid()));
  resp->set_server("cpp");
  return true;
}

// A method a queue serves, as the handlers below need it: kId numbers its
// count of posted handlers; kRequest, service S's, posts a handler for the
// next call; kRespond answers a request (false: with the error it sets).
template <int kId, typename S, typename Rq, typename Rs, auto kRequest, bool (*kRespond)(const Rq&, Rs*, grpc::Status*)>
struct Method {
  using Req = Rq;
  using Resp = Rs;
  static std::atomic<int>& Posted(Queue* q) { return q->posted[kId]; }
  template <typename... A>
  static void Request(Queue* q, void* tag, A... a) {
    (std::get<S*>(q->services)->*kRequest)(a..., q->cq.get(), q->cq.get(), tag);
  }
  static bool Respond(const Req& req, Resp* resp, grpc::Status* err) { return kRespond(req, resp, err); }
};

using Bench = BenchmarkService::AsyncService;
using Debug = DebugService::AsyncService;
using BenchUnary = Method<0, Bench, SimpleRequest, SimpleResponse, &Bench::RequestUnaryCall, FillResponse>;
using BenchStreaming = Method<1, Bench, SimpleRequest, SimpleResponse, &Bench::RequestStreamingCall, FillResponse>;
using YdbUnary = Method<2, Debug, PlainGrpcRequest, PlainGrpcResponse, &Debug::RequestPingPlainGrpc, StampResponse>;
using YdbStreaming = Method<3, Debug, PlainGrpcRequest, PlainGrpcResponse, &Debug::RequestPingStream, StampResponse>;
using UsageUnary = Method<4, UsageService::AsyncService, UsageRequest, UsageResponse,
                          &UsageService::AsyncService::RequestUsage, FillUsage>;

template <typename M>
class UnaryHandler : public Handler {
 public:
  explicit UnaryHandler(Queue* q) : q_(q) {}

  void Arm() {
    ctx_ = std::make_unique<grpc::ServerContext>();
    writer_ = std::make_unique<grpc::ServerAsyncResponseWriter<typename M::Resp>>(ctx_.get());
    state_ = kRequest;
    M::Posted(q_)++;
    M::Request(q_, this, ctx_.get(), &req_, writer_.get());
  }

  void Proceed(bool ok) override {
    switch (state_) {
      case kRequest: {
        int left = M::Posted(q_).fetch_sub(1) - 1;
        if (!ok) return;  // the server is shutting down
        if (left == 0) q_->Add<UnaryHandler<M>>();
        state_ = kFinish;
        grpc::Status err;
        if (M::Respond(req_, &resp_, &err)) {
          writer_->Finish(resp_, grpc::Status::OK, this);
        } else {
          writer_->FinishWithError(err, this);
        }
        return;
      }
      case kFinish: Arm(); return;
    }
  }

 private:
  enum State { kRequest, kFinish };
  Queue* q_;
  State state_ = kRequest;
  std::unique_ptr<grpc::ServerContext> ctx_;
  std::unique_ptr<grpc::ServerAsyncResponseWriter<typename M::Resp>> writer_;
  typename M::Req req_;
  typename M::Resp resp_;
};

template <typename M>
class StreamingHandler : public Handler {
 public:
  explicit StreamingHandler(Queue* q) : q_(q) {}

  void Arm() {
    ctx_ = std::make_unique<grpc::ServerContext>();
    stream_ = std::make_unique<grpc::ServerAsyncReaderWriter<typename M::Resp, typename M::Req>>(ctx_.get());
    state_ = kRequest;
    M::Posted(q_)++;
    M::Request(q_, this, ctx_.get(), stream_.get());
  }

  void Proceed(bool ok) override {
    switch (state_) {
      case kRequest: {
        int left = M::Posted(q_).fetch_sub(1) - 1;
        if (!ok) return;  // the server is shutting down
        if (left == 0) q_->Add<StreamingHandler<M>>();
        state_ = kRead;
        stream_->Read(&req_, this);
        return;
      }
      case kRead: {
        if (!ok) {  // the client half-closed (or the call died): end with OK
          state_ = kFinish;
          stream_->Finish(grpc::Status::OK, this);
          return;
        }
        grpc::Status err;
        if (!M::Respond(req_, &resp_, &err)) {
          state_ = kFinish;
          stream_->Finish(err, this);
          return;
        }
        state_ = kWrite;
        stream_->Write(resp_, this);
        return;
      }
      case kWrite:
        if (!ok) {
          state_ = kFinish;
          stream_->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "write failed"), this);
          return;
        }
        state_ = kRead;
        stream_->Read(&req_, this);
        return;
      case kFinish: Arm(); return;
    }
  }

 private:
  enum State { kRequest, kRead, kWrite, kFinish };
  Queue* q_;
  State state_ = kRequest;
  std::unique_ptr<grpc::ServerContext> ctx_;
  std::unique_ptr<grpc::ServerAsyncReaderWriter<typename M::Resp, typename M::Req>> stream_;
  typename M::Req req_;
  typename M::Resp resp_;
};

// Each polling thread takes its own lock around an event, so shutdown can
// stop every thread from posting before it shuts the server and queues down.
struct ThreadState {
  std::mutex mu;
  bool shutdown = false;
};

void Poll(Queue* q, ThreadState* st) {
  void* tag;
  bool ok;
  while (q->cq->Next(&tag, &ok)) {
    std::lock_guard<std::mutex> lk(st->mu);
    if (st->shutdown) continue;  // drain only
    static_cast<Handler*>(tag)->Proceed(ok);
  }
}

int Main(const std::vector<std::string>& args, const sigset_t& stop_signals) {
  std::string listen = "127.0.0.1:0";
  int64_t num_cqs = AllowedCpus(), workers = 1, callbacks = 64;
  CLI::App app(
      "rpclab-server (cpp): BenchmarkService, YDB's DebugService and rpclab.v1.UsageService on gRPC C++'s\n"
      "completion-queue API. The first stdout line is \"listening on ADDR\"; SIGINT or SIGTERM stops it.",
      "rpclab-server");
  app.add_option("--listen", listen, "HOST:PORT (port 0 picks a free port)")->capture_default_str();
  app.add_option("--num-cqs", num_cqs, "completion queues (default: the CPUs this process may use)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--workers-per-cq", workers, "threads polling each queue")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--callbacks-per-cq", callbacks, "handlers pre-posted per method and queue, re-arming themselves")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    std::fflush(stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    throw CliUsage("rpclab-server", e.what());
  }
  size_t colon = listen.rfind(':');
  std::string port_text = colon == std::string::npos ? "" : listen.substr(colon + 1);
  if (colon == std::string::npos || port_text.empty() || port_text.size() > 5 ||
      port_text.find_first_not_of("0123456789") != std::string::npos) {
    throw Usage("--listen", "want HOST:PORT, e.g. 127.0.0.1:0, got \"" + listen + "\"");
  }
  std::string host = listen.substr(0, colon);
  if (host.empty()) host = "0.0.0.0";

  BenchmarkService::AsyncService service;
  DebugService::AsyncService ydb;
  UsageService::AsyncService usage;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(host + ":" + listen.substr(colon + 1), grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.RegisterService(&ydb);
  builder.RegisterService(&usage);
  std::vector<std::unique_ptr<Queue>> queues;
  for (int i = 0; i < num_cqs; i++) {
    auto q = std::make_unique<Queue>();
    q->services = {&service, &ydb, &usage};
    q->cq = builder.AddCompletionQueue();
    queues.push_back(std::move(q));
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) {
    std::fprintf(stderr, "rpclab-server (cpp): cannot listen on %s\n", listen.c_str());
    return 1;
  }
  for (auto& q : queues) {
    for (int i = 0; i < callbacks; i++) {
      q->Add<UnaryHandler<BenchUnary>>();
      q->Add<StreamingHandler<BenchStreaming>>();
      q->Add<UnaryHandler<YdbUnary>>();
      q->Add<StreamingHandler<YdbStreaming>>();
    }
    // Usage is read twice a step: one handler per queue, which posts
    // another when a call takes it.
    q->Add<UnaryHandler<UsageUnary>>();
  }
  std::vector<std::unique_ptr<ThreadState>> states;
  std::vector<std::thread> threads;
  for (auto& q : queues) {
    for (int i = 0; i < workers; i++) {
      states.push_back(std::make_unique<ThreadState>());
      threads.emplace_back(Poll, q.get(), states.back().get());
    }
  }
  std::printf("listening on %s:%d\n", host.c_str(), port);
  std::fflush(stdout);
  std::fprintf(
      stderr,
      "rpclab-server (cpp): gRPC C++ %s, %lld completion queues x %lld threads, %lld handlers per method and queue\n",
      grpc::Version().c_str(), static_cast<long long>(num_cqs), static_cast<long long>(workers),
      static_cast<long long>(callbacks));

  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  for (auto& st : states) {
    std::lock_guard<std::mutex> lk(st->mu);
    st->shutdown = true;
  }
  // Calls still open (streams) are cancelled at once: the threads no longer
  // move them on.
  // The server first (the threads keep draining its events), then the queues.
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(100));
  for (auto& q : queues) q->cq->Shutdown();
  for (auto& t : threads) t.join();
  std::fprintf(stderr, "rpclab-server (cpp): stopped by signal %d\n", sig);
  return 0;
}

}  // namespace
}  // namespace rpclab

int main(int argc, char** argv) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  try {
    int code = rpclab::Main(std::vector<std::string>(argv + 1, argv + argc), set);
    std::fflush(stderr);
    _exit(code);  // queues drained; skip the slow global teardown
  } catch (const rpclab::Usage& u) {
    std::fprintf(stderr, "rpclab-server (cpp): %s\n", u.what());
    return 2;
  }
}
