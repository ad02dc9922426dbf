#include "api/http_bind.h"

#include <httplib.h>
#include <sys/socket.h>

#include <memory>

namespace trainyard::api {

int BindHttpServer(httplib::Server& server, const std::string& host, int port) {
  auto listener = std::make_shared<int>(-1);
  server.set_socket_options([listener](auto sock) {  // socket_t: global in 0.11, namespaced later
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    *listener = sock;
  });
  if (port == 0) {
    port = server.bind_to_any_port(host);
  } else if (!server.bind_to_port(host, port)) {
    port = -1;
  }
  if (port >= 0 && *listener >= 0) ::listen(*listener, SOMAXCONN);
  return port;
}

}  // namespace trainyard::api
