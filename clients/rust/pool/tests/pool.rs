// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

//! The pool against a real tonic server on loopback (YDB's DebugService,
//! whose reply carries the port of the client's connection, so a test sees
//! which connection served each RPC). Every wait is bounded by a deadline.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rpclab_pool::{Error, Policy, Pool};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_stream::wrappers::TcpListenerStream;
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Endpoint, Server};
use tonic::{Request, Response, Status};

mod pb {
    tonic::include_proto!("ydb.debug.v1");
}

use pb::debug_service_client::DebugServiceClient;
use pb::debug_service_server::{DebugService, DebugServiceServer};
use pb::{PlainGrpcRequest, PlainGrpcResponse};

/// How long any one test may wait for anything.
const DEADLINE: Duration = Duration::from_secs(20);

async fn within<F: Future>(what: &str, f: F) -> F::Output {
    tokio::time::timeout(DEADLINE, f).await.unwrap_or_else(|_| panic!("{what}: not done within {DEADLINE:?}"))
}

/// The first RPC it serves waits for `release`, after telling `arrived`
/// its connection's port.
type Hold = (oneshot::Sender<u16>, oneshot::Receiver<()>);

/// Answers PingPlainGrpc with the port of the caller's connection.
#[derive(Default)]
struct Debug {
    hold: Mutex<Option<Hold>>,
}

#[tonic::async_trait]
impl DebugService for Debug {
    async fn ping_plain_grpc(&self, req: Request<PlainGrpcRequest>) -> Result<Response<PlainGrpcResponse>, Status> {
        let port = req.remote_addr().map_or(0, |a| a.port());
        let hold = self.hold.lock().unwrap().take();
        if let Some((arrived, release)) = hold {
            let _ = arrived.send(port);
            let _ = release.await;
        }
        Ok(Response::new(PlainGrpcResponse { call_back_ts: u64::from(port) }))
    }

    type PingStreamStream = tokio_stream::Empty<Result<PlainGrpcResponse, Status>>;

    async fn ping_stream(
        &self,
        _: Request<tonic::Streaming<PlainGrpcRequest>>,
    ) -> Result<Response<Self::PingStreamStream>, Status> {
        Err(Status::unimplemented("not in this test"))
    }
}

/// A server on loopback, counting the connections it accepted.
struct Running {
    addr: SocketAddr,
    accepted: Arc<AtomicUsize>,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Running {
    async fn start(listener: TcpListener, svc: Debug) -> Running {
        let addr = listener.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let n = accepted.clone();
        let incoming = TcpListenerStream::new(listener).map(move |c| {
            n.fetch_add(1, Ordering::SeqCst);
            c
        });
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let _ = Server::builder()
                .add_service(DebugServiceServer::new(svc))
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stopped.await;
                })
                .await;
        });
        Running { addr, accepted, stop, task }
    }

    async fn on_any_port(svc: Debug) -> Running {
        Running::start(TcpListener::bind("127.0.0.1:0").await.unwrap(), svc).await
    }

    fn endpoint(&self) -> Endpoint {
        Endpoint::from_shared(format!("http://{}", self.addr)).unwrap().connect_timeout(Duration::from_secs(5))
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        within("server stop", self.task).await.unwrap();
    }
}

/// One RPC; the port of the connection that served it.
async fn ping<T>(c: &mut DebugServiceClient<T>) -> Result<u16, Status>
where
    T: tonic::client::GrpcService<tonic::body::BoxBody>,
    T::Error: Into<tonic::codegen::StdError>,
    T::ResponseBody: tonic::codegen::Body<Data = tonic::codegen::Bytes> + Send + 'static,
    <T::ResponseBody as tonic::codegen::Body>::Error: Into<tonic::codegen::StdError> + Send,
{
    Ok(c.ping_plain_grpc(PlainGrpcRequest {}).await?.into_inner().call_back_ts as u16)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_channel_has_its_own_connection() {
    for n in [1, 2, 4] {
        let srv = Running::on_any_port(Debug::default()).await;
        let pool = within("connect", Pool::connect(srv.endpoint(), n, Policy::RoundRobin)).await.unwrap();
        let mut client = DebugServiceClient::new(pool.clone());
        let mut ports = BTreeSet::new();
        for _ in 0..2 * n {
            ports.insert(within("ping", ping(&mut client)).await.unwrap());
        }
        let accepted = srv.accepted.load(Ordering::SeqCst);
        assert_eq!(ports.len(), n, "pool of {n}: got {} client ports ({ports:?}), want {n}", ports.len());
        assert_eq!(accepted, n, "pool of {n}: got {accepted} connections accepted, want {n}");
        assert_eq!(pool.len(), n, "got len {}, want {n}", pool.len());
        drop(client);
        srv.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_robin_takes_each_channel_in_turn() {
    let srv = Running::on_any_port(Debug::default()).await;
    let pool = within("connect", Pool::connect(srv.endpoint(), 3, Policy::RoundRobin)).await.unwrap();
    let mut client = DebugServiceClient::new(pool);
    let mut got = Vec::new();
    for _ in 0..9 {
        got.push(within("ping", ping(&mut client)).await.unwrap());
    }
    for (i, p) in got.iter().enumerate().skip(3) {
        assert_eq!(*p, got[i - 3], "RPC {i}: got port {p}, want {} (that of RPC {}): {got:?}", got[i - 3], i - 3);
    }
    let distinct: BTreeSet<_> = got.iter().collect();
    assert_eq!(distinct.len(), 3, "got {} ports, want 3: {got:?}", distinct.len());
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn least_loaded_avoids_the_busy_channel() {
    let (arrived_tx, arrived) = oneshot::channel();
    let (release, release_rx) = oneshot::channel();
    let srv = Running::on_any_port(Debug { hold: Mutex::new(Some((arrived_tx, release_rx))) }).await;
    let pool = within("connect", Pool::connect(srv.endpoint(), 2, Policy::LeastLoaded)).await.unwrap();
    let mut held = DebugServiceClient::new(pool.clone());
    let held = tokio::spawn(async move { ping(&mut held).await });
    let busy = within("the held RPC's arrival", arrived).await.unwrap();
    let mut inflight = pool.inflight();
    inflight.sort_unstable();
    assert_eq!(inflight, vec![0, 1], "got in flight {inflight:?}, want one RPC on one channel");

    let mut client = DebugServiceClient::new(pool.clone());
    for i in 0..6 {
        let p = within("ping", ping(&mut client)).await.unwrap();
        assert_ne!(p, busy, "RPC {i}: got the busy connection's port {p}, want the idle one");
    }
    release.send(()).unwrap();
    let p = within("the held RPC", held).await.unwrap().unwrap();
    assert_eq!(p, busy, "held RPC: got port {p}, want {busy}");
    assert_eq!(pool.inflight(), vec![0, 0], "after every RPC ended: got {:?}, want [0, 0]", pool.inflight());
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_rpc_is_no_longer_in_flight() {
    let (arrived_tx, arrived) = oneshot::channel();
    let (release, release_rx) = oneshot::channel::<()>();
    let srv = Running::on_any_port(Debug { hold: Mutex::new(Some((arrived_tx, release_rx))) }).await;
    let pool = within("connect", Pool::connect(srv.endpoint(), 2, Policy::LeastLoaded)).await.unwrap();
    let mut client = DebugServiceClient::new(pool.clone());
    let held = tokio::spawn(async move { ping(&mut client).await });
    within("the held RPC's arrival", arrived).await.unwrap();
    held.abort();
    let _ = held.await;
    assert_eq!(pool.inflight(), vec![0, 0], "after the RPC was dropped: got {:?}, want [0, 0]", pool.inflight());
    drop(release); // the server's handler ends, so it can stop
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovers_after_a_server_restart() {
    const N: usize = 3;
    let srv = Running::on_any_port(Debug::default()).await;
    let addr = srv.addr;
    let pool = within("connect", Pool::connect(srv.endpoint(), N, Policy::RoundRobin)).await.unwrap();
    let mut client = DebugServiceClient::new(pool);
    for _ in 0..N {
        within("ping", ping(&mut client)).await.unwrap();
    }
    srv.stop().await;

    // The same port again; the caller does nothing but call.
    let srv = Running::start(TcpListener::bind(addr).await.unwrap(), Debug::default()).await;
    let mut errors: HashMap<String, usize> = HashMap::new();
    let mut ports = BTreeSet::new();
    within("recovery", async {
        let mut ok = 0;
        while ok < 2 * N {
            match ping(&mut client).await {
                Ok(p) => {
                    ports.insert(p);
                    ok += 1;
                }
                Err(e) => {
                    *errors.entry(format!("{:?}", e.code())).or_default() += 1;
                    ok = 0;
                }
            }
        }
    })
    .await;
    assert_eq!(ports.len(), N, "after the restart: got {} connections serving ({ports:?}), want {N}", ports.len());
    eprintln!("errors while the pool reconnected: {errors:?}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_is_an_error_naming_it() {
    // A port nobody listens on: bind one, then close it.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
    let ep = Endpoint::from_shared(format!("http://{closed}")).unwrap().connect_timeout(Duration::from_secs(2));
    let cases: Vec<(&str, Result<Pool, Error>, &str)> = vec![
        ("connect size 0", Pool::connect(ep.clone(), 0, Policy::RoundRobin).await, "size 0"),
        ("connect_lazy size 0", Pool::connect_lazy(ep.clone(), 0, Policy::LeastLoaded), "size 0"),
        ("new with no channels", Pool::new(Vec::<Channel>::new(), Policy::RoundRobin), "size 0"),
        ("closed port", within("connect", Pool::connect(ep.clone(), 2, Policy::RoundRobin)).await, "channel 0"),
    ];
    for (name, got, want) in cases {
        match got {
            Ok(p) => panic!("{name}: got {p:?}, want an error naming {want:?}"),
            Err(e) => assert!(e.to_string().contains(want), "{name}: got {e}, want it to name {want:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_that_never_answers_fails_the_rpc() {
    // A listener never accepted from: the kernel completes the handshake,
    // nobody speaks HTTP/2. The endpoint's RPC timeout ends the wait.
    let mute = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let ep = Endpoint::from_shared(format!("http://{}", mute.local_addr().unwrap()))
        .unwrap()
        .connect_timeout(Duration::from_millis(500))
        .timeout(Duration::from_millis(500));
    let pool = Pool::connect_lazy(ep, 2, Policy::RoundRobin).unwrap();
    let mut client = DebugServiceClient::new(pool);
    let got = within("a ping to a mute server", ping(&mut client)).await;
    assert!(got.is_err(), "got {got:?}, want an error");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn balance_list_with_a_repeated_address_opens_one_connection() {
    // Why the pool exists: tonic keys balance_list's endpoints by URI, so
    // four copies of one address are one endpoint and one connection.
    let srv = Running::on_any_port(Debug::default()).await;
    let ch = Channel::balance_list(std::iter::repeat_n(srv.endpoint(), 4));
    let mut client = DebugServiceClient::new(ch);
    let mut ports = BTreeSet::new();
    for _ in 0..8 {
        ports.insert(within("ping", ping(&mut client)).await.unwrap());
    }
    let accepted = srv.accepted.load(Ordering::SeqCst);
    assert_eq!((ports.len(), accepted), (1, 1), "got {} ports and {accepted} connections, want 1 and 1", ports.len());
    srv.stop().await;
}
