/// \file
/// Ranks in other processes (issue 7; DESIGN.md decisions 4 and 6): the job's layout, the
/// transport between processes (the UCX module, network/transport.hpp), and the remote half of
/// the matching engine's protocols.
///
/// - Sends: a message to a rank of another process leaves as one transport message, the
///   net::envelope (context, source comm rank, destination world rank, tag, size, flags) as
///   header and the packed data as payload; UCX picks eager or rendezvous. A standard send
///   completes when the transport is done with the buffer (an eager copy, or the receiver's
///   fetch of a rendezvous message); a synchronous one also waits for the receiver's `ack`,
///   sent when the message is matched (the envelope's cookie names the sender's request).
/// - Receives: the transport's handler (run by whichever VP progresses the transport) hands the
///   envelope to the destination rank's engine (match_engine::deliver_remote): a posted receive
///   that matches takes the data now (eager: copied out; rendezvous: fetched straight into the
///   receive buffer, or through a bounce buffer when the layout is not contiguous or the buffer
///   too small); otherwise the message is queued as unexpected with the transport's descriptor
///   kept (no copy), and the receive that matches it later fetches it. Probe, Mprobe and
///   wildcards see remote messages like local ones, in arrival order.
/// - Progress: a progress function of the scheduler drives the transport from idle VPs and
///   from waiting ranks; once every VP sleeps (the scheduler's all-asleep hook), a watcher
///   thread progresses it and sleeps in poll() on the transport's event fd (no thread spins).
#pragma once

#include <cstddef>
#include <cstdint>

#include "mpi_compat/match.hpp"
#include "network/transport.hpp"

namespace mpc::mpi::remote {

namespace detail {
extern bool g_active;
int progress() noexcept;
}  // namespace detail

/// Whether the job has several processes (false: every rank is local, nothing below is used).
inline bool active() noexcept { return detail::g_active; }
/// Drives the transport once (several processes only): the polling calls (MPI_Test*,
/// MPI_Iprobe) make progress even while no VP is idle.
inline void poll() noexcept {
    if (active()) {
        detail::progress();
    }
}
/// The transport (active() only).
net::transport& transport() noexcept;

/// Starts the multi-process part of a job from the environment (bootstrap, layout, transport,
/// connections, progress). On return *first/*count are this process's ranks (all N for a
/// single process). Returns false after printing the reason (the caller ends with status 2).
bool start(int nranks, int* first, int* count) noexcept;
/// After sched::init: the transport's progress function and the event watcher (no-op for a
/// single process). False after printing the reason.
bool start_progress() noexcept;
/// The end of the job in this process, after its ranks returned: waits until every process is
/// done (progressing), then stops the transport's progress function and the event watcher.
void finish() noexcept;
/// The node of world rank wr's process: 0 .. nodes-1, numbered by each node's first process
/// (0 for every rank of a single-process job). Ranks of one node share memory
/// (MPI_COMM_TYPE_SHARED). A node is a host name and boot (node_name()).
int node_of(int world_rank) noexcept;
/// This process's node name: MPC_NODE_NAME if set, else the host name; what
/// MPI_Get_processor_name returns. The nodes are told apart by it and the kernel's boot id.
const char* node_name() noexcept;

/// The job ends with `code` (end_job): under a PMIx server, which does not end the other
/// processes when one exits, asks it to abort the whole job (PMIx_Abort). Nothing otherwise:
/// mpc_run's supervisor ends the others when this process exits non-zero.
void abort_job(int code) noexcept;

/// After sched::finalize (no VP can be inside the progress function any more, which
/// unregistering does not wait for): shuts the transport down and tells the launcher.
void close() noexcept;

/// Sends to a rank of another process (see the file comment). `r` is the sender's request;
/// it completes when the data has left `data` (and, with `sync`, the receiver matched it).
void send(std::uint32_t context, int source_rank, int source_world, int dest_world, int tag, const typed_buf& data,
          request* r, bool sync) noexcept;

/// Whether r is a send to another process that has not completed.
bool is_remote_send(const request* r) noexcept;
/// MPI_Cancel of such a send: asks the receiving process to withdraw the message (waits for
/// the answer, polling). True when it was withdrawn: r then completes as cancelled.
bool cancel_send(request* r) noexcept;

/// The remote part of an unexpected message (stored after the unexpected_msg).
struct remote_msg {
    net::envelope env;
    net::incoming msg;  ///< kept by the transport, unless the data was copied (then m->eager)
};

/// Delivers a remote message that matched receive `r` (r is unlinked; complete it). `copied`:
/// the eager data, when it is not kept by the transport.
void receive(request* r, const net::envelope& env, net::incoming& msg, const void* copied) noexcept;

}  // namespace mpc::mpi::remote
