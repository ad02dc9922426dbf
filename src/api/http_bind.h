// Binding an httplib server the way every Trainyard HTTP server listens (the API server, the
// model server of `trainyard-bert serve`).
#pragma once

#include <string>

namespace httplib {
class Server;
}

namespace trainyard::api {

// Binds `server` to host:port (port 0 = any free port) and returns the port, or -1 when the
// address is taken or not local. Without SO_REUSEPORT: cpp-httplib's default socket options add
// it, with which a second server on a taken port binds too and the kernel splits connections
// between the two; SO_REUSEADDR alone still lets a restarted server bind while old connections sit
// in TIME_WAIT. Listens with a backlog of SOMAXCONN: cpp-httplib 0.11's is 5, and a burst of
// clients overflows it (the kernel drops their SYNs, which clients resend only after 1 s, 3 s...).
int BindHttpServer(httplib::Server& server, const std::string& host, int port);

}  // namespace trainyard::api
