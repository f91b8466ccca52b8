// Copyright 2026 The rpclab Authors. SPDX-License-Identifier: Apache-2.0

#include "procnet.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace rpclab {
namespace {

// An endpoint as IPv6 bytes (IPv4 mapped) and a port.
using Endpoint = std::pair<std::array<uint8_t, 16>, uint16_t>;

std::array<uint8_t, 16> Mapped(const in_addr& a) {
  std::array<uint8_t, 16> b{};
  b[10] = b[11] = 0xff;
  std::memcpy(&b[12], &a, 4);
  return b;
}

// The IP address and port of sa; false if it is not IPv4 or IPv6.
bool FromSockaddr(const sockaddr* sa, Endpoint* e) {
  if (sa->sa_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(sa);
    *e = {Mapped(a->sin_addr), ntohs(a->sin_port)};
  } else if (sa->sa_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(sa);
    std::memcpy(e->first.data(), &a->sin6_addr, 16);
    e->second = ntohs(a->sin6_port);
  } else {
    return false;
  }
  return true;
}

bool Resolve(const std::string& target, std::set<Endpoint>* want) {
  size_t colon = target.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = target.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = std::atoi(target.c_str() + colon + 1);
  if (port <= 0 || port > 65535) return false;
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), nullptr, &hints, &res) != 0) return false;
  for (addrinfo* p = res; p != nullptr; p = p->ai_next) {
    Endpoint e;
    if (FromSockaddr(p->ai_addr, &e)) want->insert({e.first, static_cast<uint16_t>(port)});
  }
  freeaddrinfo(res);
  return !want->empty();
}

// Parses /proc/net/tcp's "0100007F:1F90" (the address words as the kernel
// prints them: each 32-bit word in host order).
bool ParseAddr(const std::string& s, Endpoint* e) {
  size_t colon = s.find(':');
  if (colon != 8 && colon != 32) return false;
  std::array<uint8_t, 16> b{};
  int words = static_cast<int>(colon / 8);
  uint8_t raw[16];
  for (int w = 0; w < words; w++) {
    uint32_t v = static_cast<uint32_t>(std::strtoul(s.substr(w * 8, 8).c_str(), nullptr, 16));
    std::memcpy(raw + 4 * w, &v, 4);
  }
  if (words == 1) {
    in_addr a;
    std::memcpy(&a, raw, 4);
    b = Mapped(a);
  } else {
    std::memcpy(b.data(), raw, 16);
  }
  *e = {b, static_cast<uint16_t>(std::strtoul(s.c_str() + colon + 1, nullptr, 16))};
  return true;
}

}  // namespace

int ConnsTo(const std::string& target) {
  std::set<Endpoint> want;
  if (!Resolve(target, &want)) return -1;
  std::set<std::string> inodes;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (dirent* e = readdir(d)) {
    char link[128];
    std::string path = std::string("/proc/self/fd/") + e->d_name;
    ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
    if (n <= 0) continue;  // closed while we looked, or . and ..
    link[n] = '\0';
    if (std::strncmp(link, "socket:[", 8) == 0) inodes.insert(std::string(link + 8, n - 9));
  }
  closedir(d);
  int count = 0;
  bool read_any = false;
  for (const char* table : {"/proc/self/net/tcp", "/proc/self/net/tcp6"}) {
    std::ifstream in(table);
    if (!in) continue;
    read_any = true;
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      char local[64], remote[64], st[8];
      unsigned long inode = 0;
      if (std::sscanf(line.c_str(), " %*s %63s %63s %7s %*s %*s %*s %*s %*s %lu", local, remote, st, &inode) != 4) {
        continue;
      }
      Endpoint rem;
      if (std::strcmp(st, "01") != 0 || !ParseAddr(remote, &rem)) continue;  // 01: ESTABLISHED
      if (want.count(rem) && inodes.count(std::to_string(inode))) count++;
    }
  }
  return read_any ? count : -1;
}

int NoDelayTo(const std::string& target) {
  std::set<Endpoint> want;
  if (!Resolve(target, &want)) return -1;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int seen = 0, on = 0;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dirfd(d)) continue;
    sockaddr_storage peer{};
    socklen_t plen = sizeof peer;
    if (getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &plen) != 0) continue;
    Endpoint rem;
    if (!FromSockaddr(reinterpret_cast<sockaddr*>(&peer), &rem) || !want.count(rem)) continue;
    int flag = 0;
    socklen_t len = sizeof flag;
    if (getsockopt(static_cast<int>(fd), IPPROTO_TCP, TCP_NODELAY, &flag, &len) != 0) continue;
    seen++;
    if (flag) on++;
  }
  closedir(d);
  if (seen == 0) return -1;
  return on == seen ? 1 : 0;
}

}  // namespace rpclab
