"""Replay a ``fabric-websearch-128`` connection matrix in ns-3 (PyPI ``ns3`` 3.44.post0): an independent second
reference for the workbench's per-packet DCTCP engine, on the same per-flow paths.

Run it from its own virtual environment (ns-3 is never a dependency of the project)::

    python3 -m venv /work/ns3venv && /work/ns3venv/bin/pip install ns3 pandas numpy
    /work/ns3venv/bin/python scripts/ns3_replay.py /work/shared/data/fabric-websearch-128/ws_128_10g_90_25ms.cm \\
        --out ns3_25ms.csv

It reads the ``.cm`` and the ``.spines`` file beside it (with the project's readers,
``workbench/aqm/cm_files.py``, loaded by path so that numba is not needed), builds the leaf-spine in ns-3, runs it,
and writes ``size_bytes,start_s,fct_s,finished`` per flow in file order.  The whole network is built and run in C++
(JIT-compiled through cppyy, which the ``ns3`` wheel uses for its Python bindings); Python only reads and writes
files.

The network of the dataset's README and how ns-3 is configured for each item
-------------------------------------------------------------------------------
(README = ``/work/shared/data/fabric-websearch-128/README.md``, section "The network the reference results were
produced on".)

1. **16 leaves x 8 hosts, 8 spines, every leaf to every spine; all links 10 Gb/s, 1 us propagation.**
   ``PointToPointHelper`` links, one per host-leaf and per leaf-spine pair, channel ``Delay`` 1 us.  ns-3's
   point-to-point device adds a 2-byte PPP header and TCP/IP adds 40 bytes of headers to each segment (item 2),
   so a full data packet is 1542 bytes on the ns-3 wire; the ``DataRate`` is set to 10 Gb/s x 1542/1500 =
   10.28 Gb/s so that a full data packet serializes in exactly 1.2 us, as a 1500-byte packet at 10 Gb/s.
   **Differs:** a pure ACK is 42 wire bytes, i.e. 32.7 ns instead of 32 ns.  ns-3's clock resolution is 1 ns.
2. **1500-byte data packets (last one carries the remainder), 40-byte ACKs, one ACK per data packet.**
   ``TcpSocket::SegmentSize`` = 1500 (payload), so a flow of S bytes is ceil(S/1500) segments as in the README
   (its packets carry no header bytes); IP packets are 1540 B (``Mtu`` 1540, no fragmentation).  ACKs are 40 B IP
   packets (20 IP + 20 TCP: ``TcpSocketBase::Timestamp`` off, ``Sack`` off, so no options).
   ``TcpSocket::DelAckCount`` = 1: every data segment is ACKed at once (no delayed ACKs).  Nagle off
   (``TcpNoDelay`` true); the whole flow is handed to the socket in one ``Send`` at its start.
3. **Switch output queues hold bytes: 100 x 1500 B per port, drop-tail for a packet that does not fit (ACKs take
   40 B); the queue counts the packet being transmitted.**  ns-3 has no such queue, so a small C++ queue
   (``WbEcnQueue``, a ``Queue<Packet>``) replaces the device queue of every switch port (leaf to host, leaf to
   spine, spine to leaf), and the traffic-control layer's queue discs are removed (``TrafficControlHelper::
   Uninstall``), so the device queue is the only queue.  It holds 100 x 1542 = 154,200 wire bytes (the README's
   150,000 B scaled by the same 1542/1500 as the link rate), counting the packet on the wire (the device dequeues a
   packet when it starts sending it; the queue remembers that packet's bytes until the next dequeue, which the
   device makes when the transmission completes), and drops an arriving packet that does not fit.
4. **Host NIC queues of 1,000 packets, no marking.**  ``DropTailQueue<Packet>`` with ``MaxSize`` 1000p, no queue
   disc.  (A full NIC queue would stop the device's transmit queue and the traffic-control layer would then drop;
   the README says it never fills, and the run reports NIC drops.)
5. **DCTCP step marking on every switch port, decided on departure: a packet leaving a queue is marked CE when the
   queue, in bytes and counting that packet, exceeds 15 x 1500 B.**  ``WbEcnQueue`` marks in ``Dequeue``: CE when
   the bytes still queued plus the departing packet exceed 15 x 1542 = 23,130 wire bytes.  **Differs:** ns-3's
   device dequeues a packet when its transmission *starts*, and the packet's headers are copied onto the channel
   then; the README's queue (htsim's ``ECNQueue``) decides when it *completes*, so packets that arrive during the
   departing packet's own 1.2 us of serialization count there and not here.  Only ECN-capable packets carrying
   TCP payload are marked (a pure ACK is never marked; in the README's model a mark on an ACK has no effect).
   ns-3's own queue discs (RED with ``MinTh = MaxTh``, ``QW`` = 1) mark on enqueue, hence the custom queue.
6. **Senders: DCTCP over NewReno, no SACK; initial window 10 packets; initial ssthresh 100 packets; alpha0 = 0;
   g = 1/16; alpha and the cut cwnd x (1 - alpha/2) once per window.**  ``TcpL4Protocol::SocketType`` =
   ``TcpDctcp`` (receivers too: they echo CE per packet with ECE, DCTCP style), ``TcpDctcp::DctcpAlphaOnInit`` = 0,
   ``DctcpShiftG`` = 1/16, ``TcpSocket::InitialCwnd`` = 10, ``InitialSlowStartThreshold`` = 100 x 1500 B,
   ``TcpSocketBase::Sack`` = false.  ns-3 updates alpha once per window of data (``TcpDctcp::PktsAcked``) and cuts
   once per window (its CWR state lasts until the data outstanding at the ECE is ACKed).  **Differs:** ns-3's
   ``TcpDctcp`` uses the alpha-based cut ``cwnd x (1 - alpha/2)`` for ssthresh on a *loss* too (its
   ``GetSsThresh`` serves both), where a NewReno sender halves; and its congestion avoidance is ``TcpLinuxReno``'s
   (cwnd grows by one segment per cwnd's worth of ACKed segments).  ns-3 cuts at the *first* ECE of a window
   (entering its CWR state, RFC 8257 style) with the alpha of the previous window, where the README's sender cuts at
   the *end* of the window.  **Cannot, stock:** ns-3's cut has no lower bound, so cwnd can fall below one segment
   (0.99 segments in a traced flow); the sender then sends nothing, no ACK comes back, and it waits for its 250 ms
   RTO with no loss at all.  ``--cwnd-floor`` bounds the cut at one segment (a ``TcpDctcp`` subclass), as the
   README's sender (in the workbench) does.  The receive window is not a limit (``RcvBufSize`` 64 MiB with window
   scaling; ``SndBufSize`` holds the largest flow).
7. **Loss recovery by three duplicate ACKs (fast retransmit, NewReno partial ACKs).**  ``TcpL4Protocol::
   RecoveryType`` = ``TcpClassicRecovery`` (ns-3's default is PRR), ``ReTxThreshold`` 3; without SACK ns-3
   retransmits on each partial ACK (RFC 6582).  ``TcpSocketBase::LimitedTransmit`` = false (RFC 3042 is not in the
   README's sender).  **Cannot, stock:** ns-3 ignores duplicate ACKs while in its CWR state (the state an ECN cut
   puts a DCTCP sender in until the data outstanding at the cut is ACKed, i.e. most of the time at 90% load), so a
   loss then ends in a timeout.  ``--cwr-fast-retransmit`` (a ``TcpSocketBase`` subclass) counts them and at the
   third enters fast recovery as from the OPEN state.
8. **Retransmission timeout: Jacobson from srtt and rttvar, initially 3 s, never below 250 ms, checked every 10 ms,
   doubling on each repeated timeout.**  ``TcpSocketBase::MinRto`` = 250 ms, ``TcpSocket::ConnTimeout`` = 3 s
   (the SYN's initial timeout), ns-3's Jacobson estimator and exponential back-off.  **Differs:** ns-3 fires the
   timer at its exact time; the README's is checked every 10 ms, so it fires up to 10 ms later (250-260 ms).
   ns-3 adds ``max(ClockGranularity, 4 rttvar)`` (granularity 1 ms, its default) to srtt, below 250 ms here either
   way.  Because of item 9, the first RTT sample comes from the SYN exchange, so a flow whose first window is lost
   entirely times out after 250 ms in ns-3, after 3 s in the README's model.
9. **No connection set-up: a flow sends its first window at its start time.**  ns-3's TCP always does the
   three-way handshake, so every flow's connection is opened in an empty network during a warm-up of
   ``WARMUP_S`` (1 ms) before the first flow starts (SYNs spaced 10 ns apart in file order), and at its start
   time (shifted by the warm-up) the flow hands all its bytes to the connected socket.  FCT is measured from that
   moment.  The handshake leaves each socket an RTT sample (srtt ~ the empty-network RTT) the README's sender
   does not have.  **Differs:** the SYN/SYN-ACK are ECN-setup packets of the handshake, not part of the flow.
10. **Routing: each flow pinned to the spine in the ``.spines`` file, its ACKs on the same spine.**  Every host
    has one address per spine k, 11.k.L.j/16 (leaf L, host j of the leaf); a flow pinned to spine k connects to its
    receiver's spine-k address, and ns-3, which takes a connecting socket's source address from the route (the
    interface address on the destination's subnet), picks the sender's spine-k address, so the ACKs are addressed
    to spine k's subnet too.  Static prefix routes (``Ipv4StaticRouting``): a leaf sends 11.k/16 up to spine k and
    11.k.L.j/32 to its own host j; spine k sends 11.k.L/24 to leaf L.  Flows within a leaf turn at the leaf.
11. **Output: FCT = the time the sender learns its last byte was acknowledged, minus the start.**  The sender
    socket's ``HighestRxAck`` trace: the flow finishes when the cumulative ACK reaches its last byte (sequence
    size + 1, the SYN taking sequence 0).  Flows that do not finish by the horizon (``--horizon-s`` after the last
    start) are written with ``finished`` False and an empty ``fct_s``.  Two more columns count each sender's entries
    into fast recovery and into timeout recovery (``fast_recoveries``, ``timeouts``, from its ``CongState`` trace).

Only the per-flow CSV and a summary line (wall time, switch marks and drops) are produced; the nine statistics are
computed with ``workbench.aqm.replay.fct_statistics`` from the project's own environment (see
``docs/ns3_reference.md``).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.machinery
import importlib.util
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

#: The README's network (fabric-websearch-128/README.md, "The network the reference results were produced on").
LEAVES, SPINES, HOSTS_PER_LEAF = 16, 8, 8
LINK_BPS = 10e9
LINK_DELAY_S = 1e-6
PACKET_BYTES = 1500
BUFFER_PKTS = 100  # 150,000 B = 100 x 1500 B per switch port
ECN_STEP_PKTS = 15  # mark when the queue, counting the departing packet, exceeds 15 x 1500 B
NIC_QUEUE_PKTS = 1000
INIT_CWND_PKTS = 10
INIT_SSTHRESH_PKTS = 100
DCTCP_G = 1.0 / 16.0
DCTCP_ALPHA0 = 0.0
MIN_RTO_S = 0.25
INIT_RTO_S = 3.0
#: ns-3's framing around a segment: 20 B IPv4 + 20 B TCP (no options) + 2 B PPP.
HEADER_BYTES = 42
#: Warm-up before the first flow during which all connections are opened (no set-up in the README; ns-3 needs one).
WARMUP_S = 1e-3

_HERE = Path(__file__).resolve().parent


def _cm_readers():
    """The project's .cm/.spines readers, loaded from their files with the input contracts they use
    (``workbench/_contracts.py`` and what it imports: numpy only), under a package of their own: importing the
    workbench package itself would need numba and the rest of the project's environment."""
    root = _HERE.parent / "workbench"
    for name, where in (("_wb_files", root), ("_wb_files.aqm", root / "aqm")):
        pkg = importlib.util.module_from_spec(importlib.machinery.ModuleSpec(name, None, is_package=True))
        pkg.__path__ = [str(where)]
        sys.modules[name] = pkg
    mod = importlib.import_module("_wb_files.aqm.cm_files")
    return mod.read_connection_matrix, mod.read_spines


_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include <vector>
#include <chrono>
#include <iostream>

namespace wbns3 {
using namespace ns3;

// Switch output queue of the README: drop-tail in bytes counting the packet on the wire, DCTCP step mark on
// departure counting the departing packet.
class WbEcnQueue : public Queue<Packet> {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("wbns3::WbEcnQueue").SetParent<Queue<Packet>>().SetGroupName("Network");
        return tid;
    }
    WbEcnQueue() { SetMaxSize(QueueSize("10000000p")); }
    uint64_t m_limit = 0, m_k = 0, m_inService = 0, m_marks = 0, m_drops = 0;
    bool Enqueue(Ptr<Packet> p) override {
        if (GetNBytes() + m_inService + p->GetSize() > m_limit) {
            m_drops++;
            if (s_logDrops) LogDrop(p);
            DropBeforeEnqueue(p);
            return false;
        }
        return DoEnqueue(GetContainer().end(), p);
    }
    Ptr<Packet> Dequeue() override {
        Ptr<Packet> p = DoDequeue(GetContainer().begin());
        if (!p) { m_inService = 0; return p; }
        uint32_t sz = p->GetSize();
        if (GetNBytes() + sz > m_k) Mark(p);
        m_inService = sz;
        return p;
    }
    static bool s_logDrops;
    void LogDrop(Ptr<Packet> p) {
        Ptr<Packet> c = p->Copy();
        PppHeader ppp;
        c->RemoveHeader(ppp);
        Ipv4Header ip;
        c->RemoveHeader(ip);
        TcpHeader tcp;
        c->RemoveHeader(tcp);
        std::cerr << "DROP " << Simulator::Now().GetNanoSeconds() << " " << ip.GetSource() << ":" << tcp.GetSourcePort()
                  << "->" << ip.GetDestination() << ":" << tcp.GetDestinationPort() << " seq " << tcp.GetSequenceNumber()
                  << " ack " << tcp.GetAckNumber() << " payload " << c->GetSize() << " queued " << GetNBytes()
                  << " inservice " << m_inService << std::endl;
    }
    Ptr<Packet> Remove() override { return DoRemove(GetContainer().begin()); }
    Ptr<const Packet> Peek() const override { return DoPeek(GetContainer().begin()); }
    void Mark(Ptr<Packet> p) {
        PppHeader ppp;
        p->RemoveHeader(ppp);
        Ipv4Header ip;
        p->RemoveHeader(ip);
        uint8_t ecn = ip.GetEcn();
        if (ip.GetPayloadSize() > 20 && (ecn == Ipv4Header::ECN_ECT0 || ecn == Ipv4Header::ECN_ECT1)) {
            ip.SetEcn(Ipv4Header::ECN_CE);
            m_marks++;
        }
        p->AddHeader(ip);
        p->AddHeader(ppp);
    }
};

// Optional sender (--cwr-fast-retransmit): ns-3's TcpSocketBase::DupAck ignores duplicate ACKs while the sender is in
// CA_CWR (the state DCTCP's ECN window cut puts it in, until the data outstanding at the cut is ACKed), so a loss
// during CWR can only end in a retransmission timeout.  A NewReno sender (RFC 5681/6582; Linux's state machine
// leaves CWR for Recovery on dupacks) fast-retransmits after three.  This subclass counts duplicate ACKs in CWR and,
// at the third, leaves CWR for ns-3's own DISORDER path, which then enters fast recovery as from OPEN.
class WbTcpSocket : public TcpSocketBase {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("wbns3::WbTcpSocket").SetParent<TcpSocketBase>().SetGroupName("Internet");
        return tid;
    }
    uint32_t m_cwrDupAcks = 0;
    static uint64_t s_cwrRecoveries;
  protected:
    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& h) override {
        SequenceNumber32 ack = h.GetAckNumber(), head = m_txBuffer->HeadSequence();
        if (m_tcb->m_congState == TcpSocketState::CA_CWR && !m_sackEnabled && ack == head &&
            ack < m_tcb->m_highTxMark && packet->GetSize() == 0) {
            if (++m_cwrDupAcks == m_retxThresh) {
                m_congestionControl->CongestionStateSet(m_tcb, TcpSocketState::CA_DISORDER);
                m_tcb->m_congState = TcpSocketState::CA_DISORDER;
                m_dupAckCount = m_retxThresh - 1;  // this ACK is the third: DupAck counts it and enters recovery
                m_recoverActive = false;
                m_cwrDupAcks = 0;
                s_cwrRecoveries++;
            }
        } else if (ack > head) {
            m_cwrDupAcks = 0;
        }
        TcpSocketBase::ReceivedAck(packet, h);
    }
};
uint64_t WbTcpSocket::s_cwrRecoveries = 0;

// Optional sender (--cwnd-floor): ns-3's TcpDctcp::GetSsThresh returns cwnd x (1 - alpha/2) with no lower bound, so
// repeated cuts take cwnd below one segment; the sender then cannot send a full segment, nothing is in flight, no
// ACK comes, and only the retransmission timeout (250 ms) restarts it.  The README's sender (as the workbench
// implements it) never cuts below one packet (Linux: two).  This subclass bounds the cut at one segment.
class WbDctcp : public TcpDctcp {
  public:
    static TypeId GetTypeId() {
        static TypeId tid = TypeId("wbns3::WbDctcp").SetParent<TcpDctcp>().SetGroupName("Internet");
        return tid;
    }
    WbDctcp() : TcpDctcp() {}
    WbDctcp(const WbDctcp& o) : TcpDctcp(o) {}
    static uint64_t s_floored;
    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override {
        uint32_t v = TcpDctcp::GetSsThresh(tcb, bytesInFlight);
        if (v < tcb->m_segmentSize) { s_floored++; return tcb->m_segmentSize; }
        return v;
    }
    Ptr<TcpCongestionOps> Fork() override { return CopyObject<WbDctcp>(this); }
};
uint64_t WbDctcp::s_floored = 0;

Ptr<Socket> SenderSocket(Ptr<Node> node, bool cwrFix, bool floorFix) {
    if (!cwrFix && !floorFix) return Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    Ptr<TcpSocketBase> so = cwrFix ? Ptr<TcpSocketBase>(CreateObject<WbTcpSocket>()) : CreateObject<TcpSocketBase>();
    so->SetNode(node);
    so->SetTcp(tcp);
    so->SetRtt(CreateObject<RttMeanDeviation>());
    if (floorFix) so->SetCongestionControlAlgorithm(CreateObject<WbDctcp>());
    else so->SetCongestionControlAlgorithm(CreateObject<TcpDctcp>());
    so->SetRecoveryAlgorithm(CreateObject<TcpClassicRecovery>());
    tcp->AddSocket(so);
    return so;
}

bool WbEcnQueue::s_logDrops = getenv("WB_NS3_LOG_DROPS") != nullptr;
static std::vector<Ptr<Socket>> g_sock;

static std::vector<uint64_t> g_size;
static std::vector<double> g_finish;
static uint32_t g_done = 0;
static std::vector<Ptr<WbEcnQueue>> g_queues;
static std::vector<Ptr<Queue<Packet>>> g_nic;

static int g_trace = -1;
void TrCong(TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t n) {
    std::cerr << "TR " << Simulator::Now().GetNanoSeconds() << " cong " << TcpSocketState::TcpCongStateName[o] << "->"
              << TcpSocketState::TcpCongStateName[n] << std::endl;
}
void TrTx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
    if (p->GetSize() > 0)
        std::cerr << "TR " << Simulator::Now().GetNanoSeconds() << " tx seq " << (h.GetSequenceNumber().GetValue() - 1) / 1500
                  << std::endl;
}
void TrRx(Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
    std::cerr << "TR " << Simulator::Now().GetNanoSeconds() << " rx ack " << (h.GetAckNumber().GetValue() - 1) / 1500
              << ((h.GetFlags() & TcpHeader::ECE) ? " ECE" : "") << std::endl;
}
void TrCwnd(uint32_t o, uint32_t n) {
    std::cerr << "TR " << Simulator::Now().GetNanoSeconds() << " cwnd " << n / 1500.0 << std::endl;
}
static std::vector<double> g_recoveries, g_timeouts;
std::vector<double> Recoveries() { return g_recoveries; }
std::vector<double> Timeouts() { return g_timeouts; }
void OnCongState(uint32_t i, TcpSocketState::TcpCongState_t oldv, TcpSocketState::TcpCongState_t newv) {
    if (newv == TcpSocketState::CA_RECOVERY && oldv != TcpSocketState::CA_RECOVERY) g_recoveries[i] += 1;
    if (newv == TcpSocketState::CA_LOSS && oldv != TcpSocketState::CA_LOSS) g_timeouts[i] += 1;
}
void OnAck(uint32_t i, SequenceNumber32 oldv, SequenceNumber32 newv) {
    if (g_finish[i] < 0 && (uint64_t)newv.GetValue() >= g_size[i] + 1) {
        g_finish[i] = Simulator::Now().GetSeconds();
        if (++g_done == g_sock.size()) Simulator::Stop();
    }
}
static uint64_t g_rx = 0, g_accepted = 0;
void OnRecv(Ptr<Socket> s) {
    while (Ptr<Packet> p = s->Recv()) { if (p->GetSize() == 0) break; g_rx += p->GetSize(); }
}
void OnAccept(Ptr<Socket> s, const Address& from) { g_accepted++; s->SetRecvCallback(MakeCallback(&OnRecv)); }
void DoConnect(uint32_t i, Ipv4Address dst) { g_sock[i]->Connect(InetSocketAddress(dst, 5000)); }
void DoSend(uint32_t i) {
    int r = g_sock[i]->Send(Create<Packet>((uint32_t)g_size[i]));
    if (r < 0) NS_FATAL_ERROR("flow " << i << ": Send refused (state " << g_sock[i]->GetErrno() << ")");
}

void DebugDrop(const Ipv4Header& h, Ptr<const Packet> p, Ipv4L3Protocol::DropReason r, Ptr<Ipv4> ip, uint32_t itf) {
    std::cerr << Simulator::Now().GetNanoSeconds() << " ns: IP drop " << h.GetSource() << "->" << h.GetDestination()
              << " reason " << r << " node " << ip->GetObject<Node>()->GetId() << std::endl;
}
void DebugTx(Ptr<const Packet> p, Ptr<Ipv4> ip, uint32_t itf) {
    Ipv4Header h; p->PeekHeader(h);
    std::cerr << Simulator::Now().GetNanoSeconds() << " ns: IP tx node " << ip->GetObject<Node>()->GetId() << " if " << itf
              << " " << h.GetSource() << "->" << h.GetDestination() << " " << p->GetSize() << " B" << std::endl;
}

static std::chrono::steady_clock::time_point g_t0;
void Progress(double every) {
    double w = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_t0).count();
    std::cerr << "ns-3: simulated " << Simulator::Now().GetSeconds() * 1e3 << " ms, " << g_done << "/" << g_sock.size()
              << " flows done, " << w << " s wall" << std::endl;
    Simulator::Schedule(Seconds(every), &Progress, every);
}

Ipv4Address HostAddr(int k, int l, int j) { return Ipv4Address((11u << 24) | (k << 16) | (l << 8) | (j + 1)); }

static uint64_t g_tcDrops = 0, g_ipDrops = 0, g_macDrops = 0;
void OnTcDrop(Ptr<const Packet> p) {
    g_tcDrops++;
    if (WbEcnQueue::s_logDrops) {
        Ptr<Packet> c = p->Copy();
        Ipv4Header ip;
        c->RemoveHeader(ip);
        TcpHeader tcp;
        c->RemoveHeader(tcp);
        std::cerr << "TCDROP " << Simulator::Now().GetNanoSeconds() << " " << ip.GetSource() << ":"
                  << tcp.GetSourcePort() << "->" << ip.GetDestination() << ":" << tcp.GetDestinationPort() << " seq "
                  << tcp.GetSequenceNumber() << " ack " << tcp.GetAckNumber() << " payload " << c->GetSize() << std::endl;
    }
}
void OnIpDrop(const Ipv4Header& h, Ptr<const Packet> p, Ipv4L3Protocol::DropReason r, Ptr<Ipv4> ip, uint32_t itf) {
    g_ipDrops++;
}
void OnMacDrop(Ptr<const Packet> p) { g_macDrops++; }

Ptr<WbEcnQueue> SwitchQueue(Ptr<NetDevice> d, uint64_t limit, uint64_t k) {
    Ptr<WbEcnQueue> q = CreateObject<WbEcnQueue>();
    q->m_limit = limit;
    q->m_k = k;
    DynamicCast<PointToPointNetDevice>(d)->SetQueue(q);
    g_queues.push_back(q);
    return q;
}

// Build the leaf-spine, open every flow's connection in the warm-up, start the flows, run.
// Returns per flow the finish time (s, -1 if unfinished); stats: marks, switch drops, NIC drops, events time.
std::vector<double> Run(int leaves, int spines, int hpl, uint64_t rate_bps, double delay_s, uint32_t mtu,
                        uint32_t seg, uint64_t qlimit, uint64_t kmark, uint32_t nic_pkts, uint32_t icwnd,
                        uint32_t issthresh, double g, double alpha0, double min_rto, double init_rto,
                        const std::vector<int>& src, const std::vector<int>& dst, const std::vector<int>& spine,
                        const std::vector<double>& start, const std::vector<uint64_t>& size, double warmup,
                        double horizon, double progress, bool cwr_fix, bool floor_fix,
                        std::vector<double>& stats) {
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpDctcp::DctcpShiftG", DoubleValue(g));
    Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(alpha0));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(seg));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(icwnd));
    Config::SetDefault("ns3::TcpSocket::InitialSlowStartThreshold", UintegerValue(issthresh));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(init_rto)));
    uint64_t maxsize = 0;
    for (auto s : size) maxsize = std::max(maxsize, s);
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(std::max<uint64_t>(maxsize + seg, 131072)));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64u << 20));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(min_rto)));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(Seconds(init_rto)));

    int nh = leaves * hpl;
    NodeContainer hosts, leaf, sp;
    hosts.Create(nh);
    leaf.Create(leaves);
    sp.Create(spines);
    InternetStackHelper internet;
    internet.Install(hosts);
    internet.Install(leaf);
    internet.Install(sp);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate_bps)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(mtu));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(delay_s)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, nic_pkts)));
    Ipv4AddressHelper addr("10.0.0.0", "255.255.255.252");
    TrafficControlHelper tch;
    std::vector<uint32_t> hostPort(nh), hostIf(nh);
    std::vector<Ipv4Address> hostGw(nh);
    std::vector<std::vector<uint32_t>> up(leaves, std::vector<uint32_t>(spines)), down(spines, std::vector<uint32_t>(leaves));
    for (int h = 0; h < nh; h++) {
        NetDeviceContainer d = p2p.Install(hosts.Get(h), leaf.Get(h / hpl));
        Ipv4InterfaceContainer ic = addr.Assign(d);
        addr.NewNetwork();
        tch.Uninstall(d);
        SwitchQueue(d.Get(1), qlimit, kmark);
        g_nic.push_back(DynamicCast<PointToPointNetDevice>(d.Get(0))->GetQueue());
        hostIf[h] = hosts.Get(h)->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(0));
        hostPort[h] = leaf.Get(h / hpl)->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(1));
        hostGw[h] = ic.GetAddress(1);
    }
    for (int l = 0; l < leaves; l++)
        for (int k = 0; k < spines; k++) {
            NetDeviceContainer d = p2p.Install(leaf.Get(l), sp.Get(k));
            addr.Assign(d);
            addr.NewNetwork();
            tch.Uninstall(d);
            SwitchQueue(d.Get(0), qlimit, kmark);
            SwitchQueue(d.Get(1), qlimit, kmark);
            up[l][k] = leaf.Get(l)->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(0));
            down[k][l] = sp.Get(k)->GetObject<Ipv4>()->GetInterfaceForDevice(d.Get(1));
        }
    // Addresses and routes: every host h (leaf L, index j in the leaf) has one address per spine k, 11.k.L.j/16.
    // A flow pinned to spine k connects to its receiver's spine-k address; ns-3 sets a connecting socket's source
    // from the route, choosing the interface address on the destination's subnet, i.e. the sender's spine-k
    // address, so the flow's ACKs come back through spine k too.  Routes are prefixes: a leaf sends 11.k/16 up to
    // spine k and 11.k.L.j/32 (its own hosts) down; spine k sends 11.k.L/24 to leaf L.
    Ipv4StaticRoutingHelper srh;
    for (int h = 0; h < nh; h++) {
        Ptr<Ipv4> ip = hosts.Get(h)->GetObject<Ipv4>();
        for (int k = 0; k < spines; k++)
            ip->AddAddress(hostIf[h], Ipv4InterfaceAddress(HostAddr(k, h / hpl, h % hpl), Ipv4Mask("255.255.0.0")));
        srh.GetStaticRouting(ip)->SetDefaultRoute(hostGw[h], hostIf[h]);
    }
    for (int l = 0; l < leaves; l++) {
        Ptr<Ipv4StaticRouting> r = srh.GetStaticRouting(leaf.Get(l)->GetObject<Ipv4>());
        for (int k = 0; k < spines; k++) {
            r->AddNetworkRouteTo(HostAddr(k, 0, 0), Ipv4Mask("255.255.0.0"), up[l][k]);
            for (int j = 0; j < hpl; j++) r->AddHostRouteTo(HostAddr(k, l, j), hostPort[l * hpl + j]);
        }
    }
    for (int k = 0; k < spines; k++) {
        Ptr<Ipv4StaticRouting> r = srh.GetStaticRouting(sp.Get(k)->GetObject<Ipv4>());
        for (int l = 0; l < leaves; l++) r->AddNetworkRouteTo(HostAddr(k, l, 0), Ipv4Mask("255.255.255.0"), down[k][l]);
    }

    // receivers: one listening DCTCP socket per host
    std::vector<Ptr<Socket>> listeners;
    for (int h = 0; h < nh; h++) {
        Ptr<Socket> ls = Socket::CreateSocket(hosts.Get(h), TcpSocketFactory::GetTypeId());
        ls->Bind(InetSocketAddress(Ipv4Address::GetAny(), 5000));
        ls->Listen();
        ls->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(), MakeCallback(&OnAccept));
        listeners.push_back(ls);
    }
    size_t n = src.size();
    g_sock.assign(n, nullptr);
    g_size = size;
    g_finish.assign(n, -1.0);
    g_recoveries.assign(n, 0.0);
    g_trace = getenv("WB_NS3_TRACE_FLOW") ? atoi(getenv("WB_NS3_TRACE_FLOW")) : -1;
    g_timeouts.assign(n, 0.0);
    g_done = 0;
    for (size_t i = 0; i < n; i++) {
        int s = src[i], t = dst[i], k = spine[i] < 0 ? 0 : spine[i];  // within a leaf: any address, it turns there
        Ipv4Address b = HostAddr(k, t / hpl, t % hpl);
        Ptr<Socket> so = SenderSocket(hosts.Get(s), cwr_fix, floor_fix);
        so->Bind();
        so->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnAck, (uint32_t)i));
        so->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, (uint32_t)i));
        if ((int)i == g_trace) {
            so->TraceConnectWithoutContext("CongState", MakeCallback(&TrCong));
            so->TraceConnectWithoutContext("Tx", MakeCallback(&TrTx));
            so->TraceConnectWithoutContext("Rx", MakeCallback(&TrRx));
            so->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&TrCwnd));
        }
        g_sock[i] = so;
        Simulator::Schedule(NanoSeconds(10 * i), &DoConnect, (uint32_t)i, b);
        Simulator::Schedule(Seconds(warmup + start[i]), &DoSend, (uint32_t)i);
    }
    Config::ConnectWithoutContext("/NodeList/*/$ns3::TrafficControlLayer/TcDrop", MakeCallback(&OnTcDrop));
    Config::ConnectWithoutContext("/NodeList/*/$ns3::Ipv4L3Protocol/Drop", MakeCallback(&OnIpDrop));
    Config::ConnectWithoutContext("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice/PhyRxDrop", MakeCallback(&OnMacDrop));
    if (getenv("WB_NS3_DEBUG")) {
        Config::ConnectWithoutContext("/NodeList/*/$ns3::Ipv4L3Protocol/Drop", MakeCallback(&DebugDrop));
        Config::ConnectWithoutContext("/NodeList/*/$ns3::Ipv4L3Protocol/Tx", MakeCallback(&DebugTx));
    }
    double last = 0;
    for (auto x : start) last = std::max(last, x);
    Simulator::Stop(Seconds(warmup + last + horizon));
    g_t0 = std::chrono::steady_clock::now();
    if (progress > 0) Simulator::Schedule(Seconds(progress), &Progress, progress);
    Simulator::Run();
    double marks = 0, drops = 0, nicdrops = 0;
    for (auto& q : g_queues) { marks += q->m_marks; drops += q->m_drops; }
    for (auto& q : g_nic) nicdrops += q->GetTotalDroppedPackets();
    stats = {marks, drops, nicdrops, Simulator::Now().GetSeconds(), (double)g_accepted, (double)g_rx,
             (double)WbTcpSocket::s_cwrRecoveries, (double)g_tcDrops, (double)g_ipDrops, (double)g_macDrops,
             (double)WbDctcp::s_floored};
    std::vector<double> out(n);
    for (size_t i = 0; i < n; i++) out[i] = g_finish[i] < 0 ? -1.0 : g_finish[i] - (warmup + start[i]);
    Simulator::Destroy();
    return out;
}
}  // namespace wbns3
"""


def run_ns3(
    flows: pd.DataFrame,
    spines: np.ndarray,
    *,
    horizon_s: float = 5.0,
    progress_s: float = 0.0,
    cwr_fast_retransmit: bool = False,
    cwnd_floor: bool = False,
) -> tuple[pd.DataFrame, dict]:
    """Replay ``flows`` (``src, dst, start_s, size_bytes``) with per-flow ``spines`` in ns-3; the per-flow FCTs and
    run counters."""
    import cppyy
    from ns import ns  # noqa: F401  (loads the ns-3 libraries and headers)

    cppyy.cppdef(_CPP)
    wb = cppyy.gbl.wbns3
    scale = (PACKET_BYTES + HEADER_BYTES) / PACKET_BYTES  # wire bytes of a full packet / README bytes
    wire_pkt = PACKET_BYTES + HEADER_BYTES
    V = cppyy.gbl.std.vector
    stats = V["double"]()
    t0 = time.perf_counter()
    fin = wb.Run(
        LEAVES,
        SPINES,
        HOSTS_PER_LEAF,
        round(LINK_BPS * scale),
        LINK_DELAY_S,
        PACKET_BYTES + 40,
        PACKET_BYTES,
        BUFFER_PKTS * wire_pkt,
        ECN_STEP_PKTS * wire_pkt,
        NIC_QUEUE_PKTS,
        INIT_CWND_PKTS,
        INIT_SSTHRESH_PKTS * PACKET_BYTES,
        DCTCP_G,
        DCTCP_ALPHA0,
        MIN_RTO_S,
        INIT_RTO_S,
        V["int"](flows["src"].astype(int).tolist()),
        V["int"](flows["dst"].astype(int).tolist()),
        V["int"]([int(x) for x in spines]),
        V["double"](flows["start_s"].astype(float).tolist()),
        V["uint64_t"](flows["size_bytes"].astype(int).tolist()),
        WARMUP_S,
        horizon_s,
        progress_s,
        cwr_fast_retransmit,
        cwnd_floor,
        stats,
    )
    wall = time.perf_counter() - t0
    fct = np.array(list(fin), dtype=float)
    done = fct >= 0
    out = pd.DataFrame(
        {
            "size_bytes": flows["size_bytes"].to_numpy(),
            "start_s": flows["start_s"].to_numpy(),
            "fct_s": np.where(done, fct, np.nan),
            "finished": done,
            "fast_recoveries": np.array(list(wb.Recoveries()), dtype=int),
            "timeouts": np.array(list(wb.Timeouts()), dtype=int),
        }
    )
    s = list(stats)
    info = {
        "floored_cuts": int(s[10]),
        "tc_drops": int(s[7]),
        "ip_drops": int(s[8]),
        "phy_rx_drops": int(s[9]),
        "cwr_recoveries": int(s[6]),
        "accepted": int(s[4]),
        "rx_bytes": int(s[5]),
        "wall_s": wall,
        "marks": int(s[0]),
        "switch_drops": int(s[1]),
        "nic_drops": int(s[2]),
        "sim_end_s": s[3],
    }
    return out, info


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="ns3_replay.py", description=__doc__.splitlines()[0])
    p.add_argument("file", type=Path, help="connection matrix (htsim .cm format)")
    p.add_argument("--out", type=Path, required=True, help="CSV to write: size_bytes,start_s,fct_s,finished")
    p.add_argument("--spines", type=Path, help="per-flow spines ('ID SPINE'; default: the .spines beside FILE)")
    p.add_argument("--horizon-s", type=float, default=5.0, help="simulate this long after the last start (s)")
    p.add_argument(
        "--cwr-fast-retransmit",
        action="store_true",
        help="senders fast-retransmit on three duplicate ACKs while in DCTCP's CWR state (stock ns-3 does not)",
    )
    p.add_argument(
        "--cwnd-floor",
        action="store_true",
        help="senders' DCTCP cut never below one segment (stock ns-3's can go below, stalling until a timeout)",
    )
    p.add_argument("--progress-s", type=float, default=0.01, help="report progress every this much simulated time")
    args = p.parse_args(argv)
    if args.horizon_s <= 0:
        p.error(f"--horizon-s must be > 0, got {args.horizon_s}")
    spines_file = args.spines or args.file.with_suffix(".spines")
    read_cm, read_spines = _cm_readers()
    flows = read_cm(args.file)
    if flows.attrs["n_hosts"] > LEAVES * HOSTS_PER_LEAF:
        p.error(f"{args.file} has {flows.attrs['n_hosts']} hosts; the README's network has {LEAVES * HOSTS_PER_LEAF}")
    spines = read_spines(spines_file, flows, SPINES, HOSTS_PER_LEAF)
    out, info = run_ns3(
        flows,
        spines,
        horizon_s=args.horizon_s,
        progress_s=args.progress_s,
        cwr_fast_retransmit=args.cwr_fast_retransmit,
        cwnd_floor=args.cwnd_floor,
    )
    out.to_csv(args.out, index=False)
    print(
        f"{len(out)} flows, {int(out.finished.sum())} finished; ns-3 run {info['wall_s']:.1f} s wall; "
        f"{info['marks']:,} CE marks, {info['switch_drops']:,} switch drops, {info['nic_drops']:,} NIC queue drops, "
        f"{info['tc_drops']:,} drops at a stopped NIC (traffic-control layer), {info['ip_drops']:,} IP drops, "
        f"{info['phy_rx_drops']:,} PHY receive drops, "
        f"{info['cwr_recoveries']:,} fast retransmits from CWR, "
        f"{info['floored_cuts']:,} cuts floored at one segment; "
        f"simulated to {info['sim_end_s']:.4f} s; {info['accepted']} accepted, {info['rx_bytes']:,} B received -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
