/// \file
/// The network layer's knobs. In libmpc (not in the UCX module, libmpc_net_ucx.so, which is
/// loaded only for jobs of several processes) so that mpc_run knows and checks them in every job.
#include "lib/config.hpp"

MPC_CONFIG_TABLE(net, {
    {"MPC_NET_UCX_RNDV_THRESH", ::mpc::config::knob_type::size, "0",
     "UCX transport: messages of at least this many bytes are forced to the rendezvous protocol "
     "(UCP_AM_SEND_FLAG_RNDV); 0 leaves the choice to UCX (UCX_RNDV_THRESH)"},
    {"MPC_NET_UCX_TCP_EAGER", ::mpc::config::knob_type::size, "126976",
     "UCX transport: messages of at most this many bytes to a process reached over TCP are sent eager "
     "(UCP_AM_SEND_FLAG_EAGER: one trip, one more copy at the receiver) instead of by UCX's rendezvous, "
     "which UCX starts at about 19 KiB over TCP (request, answer, data, acknowledgements: three to five "
     "trips, each a wake-up of the other side); the default, 124 KiB, keeps an eager message in one "
     "fragment of the 128 KiB UCX_TCP_RX_SEG_SIZE the transport sets (a larger one is reassembled and "
     "loses bandwidth); 0: UCX decides (UCX_RNDV_THRESH); MPC_NET_UCX_RNDV_THRESH wins where both apply"},
    {"MPC_NET_UCX_BATCH", ::mpc::config::knob_type::size, "32768",
     "UCX transport: bytes of a batch of small messages to one process (envelope and data of each); a "
     "message of at most a quarter of that, sent to a process that got one since the last progress, is "
     "packed into its batch, which the next progress sends as one active message (eager); 0: every "
     "message leaves at once. At most 65536"},
    {"MPC_NET_UCX_CLOSE_TIMEOUT", ::mpc::config::knob_type::integer, "10000",
     "UCX transport: milliseconds shutdown waits for peers to acknowledge the endpoint close before it "
     "gives up on them (they are reported)"},
    {"MPC_NET_UCX_PEER_FAILURE", ::mpc::config::knob_type::boolean, "0",
     "UCX transport: report a dead peer process through UCX (UCP_ERR_HANDLING_MODE_PEER); UCX 1.13 then "
     "uses no shared-memory transport between processes (TCP only); the launcher detects dead processes "
     "either way"},
    {"MPC_NET_SHM", ::mpc::config::knob_type::boolean, "1",
     "processes of one node talk through the shared-memory transport (rings in memfd segments, CMA for "
     "large messages) instead of UCX"},
    {"MPC_NET_SHM_EAGER", ::mpc::config::knob_type::size, "8192",
     "shared-memory transport: messages up to this many bytes are copied through the ring; larger ones "
     "are read by the receiver straight from the sender's buffer (CMA, process_vm_readv)"},
    {"MPC_NET_SHM_MEMBARRIER", ::mpc::config::knob_type::boolean, "1",
     "shared-memory transport: a process about to sleep issues membarrier(GLOBAL_EXPEDITED) so that its "
     "senders publish messages without a fence each (where the kernel offers it); 0: a fence per message"},
    {"MPC_NET_SHM_PIDFD", ::mpc::config::knob_type::boolean, "1",
     "shared-memory transport: use pidfd_open and pidfd_getfd (Linux 5.6) for a peer process's liveness and "
     "its eventfd where the kernel has them; 0, or a kernel without them: a pipe that the peers open through "
     "/proc/<pid>/fd wakes a sleeping process, /proc/<pid>/stat tells whether a peer ended"},
    {"MPC_NET_SHM_SPLIT", ::mpc::config::knob_type::size, "131072",
     "shared-memory transport: rendezvous messages of at least this many bytes are copied by both "
     "processes at once (the receiver reads chunks, the sender writes others); 0: the receiver alone"},
    {"MPC_NET_SHM_RING", ::mpc::config::knob_type::size, "262144",
     "shared-memory transport: bytes of the receive ring of each pair of processes of a node"},
    {"MPC_NET_CONNECT_TIMEOUT", ::mpc::config::knob_type::integer, "30",
     "seconds a process of a multi-process job waits at start-up for a first message from every other "
     "process before it reports those it cannot reach (and over which transport) and ends the job"},
    {"MPC_NET_BUSY_SPIN_US", ::mpc::config::knob_type::integer, "2000",
     "while the transport holds 1 to MPC_NET_BUSY_SPIN_OPS sends or fetches in flight, idle VPs keep "
     "polling it (no sleep) for up to this many microseconds after its last event (large messages over "
     "TCP move only while polled); 0: they sleep after MPC_SCHED_SPIN_US"},
    {"MPC_NET_BUSY_SPIN_IDLE", ::mpc::config::knob_type::boolean, "0",
     "1: idle VPs also poll UCX (MPC_NET_BUSY_SPIN_US) while it holds no operation in flight, so that a rank "
     "waiting for a message from another node finds it at the next poll instead of after a wake-up (for "
     "dedicated cores: on cores shared with other busy processes polling lost 40% of the 4 KiB bandwidth "
     "between two simulated nodes); 0: they sleep after MPC_SCHED_SPIN_US when nothing is in flight"},
    {"MPC_NET_BUSY_SPIN_OPS", ::mpc::config::knob_type::integer, "2",
     "the most operations in flight for which idle VPs poll (MPC_NET_BUSY_SPIN_US): with more (a window "
     "of messages) they sleep and leave the core to the kernel's network processing"},
    {"MPC_NET_PROGRESS_US", ::mpc::config::knob_type::integer, "1000",
     "while some VP is awake, the event watcher of a multi-process job looks whether any VP polled the "
     "transports meanwhile; if none did (every awake VP computes) it progresses them itself, so that "
     "non-blocking operations between processes go on while every rank computes. It looks this many "
     "microseconds after a look that found work, and backs off up to 16 times that while looks find none; "
     "0: never (the watcher then takes over only when every VP sleeps); at most 10000000"},
    {"MPC_BOOTSTRAP_FD", ::mpc::config::knob_type::integer, "-1",
     "set by mpc_run -p for each process it starts: the socket to the launcher (-1: no launcher socket; "
     "not for users)"},
    {"MPC_PROC_INDEX", ::mpc::config::knob_type::integer, "-1",
     "set by mpc_run -p: this process's index in the job (not for users)"},
    {"MPC_PROC_COUNT", ::mpc::config::knob_type::integer, "0",
     "set by mpc_run -p: the job's number of processes (not for users)"},
});

