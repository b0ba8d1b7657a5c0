//! The items of the source documents that a reproduction answers: every
//! figure, table, quantitative claim and method item (workload, tool,
//! statistic, platform setting) a reader of the four documents would check,
//! each with the paper's own numbers, the statistic it used and the hardware
//! it ran on. `hiops reproduce` prints one row per item.
//!
//! The documents are the HIOPS paper (USENIX ATC'14), the ADMS'10 platform
//! paper, the IOZone study of SSDs and disks (PDSW'08) and an untitled slide
//! deck on SSD platform bottlenecks. Numbers are quoted as the documents give
//! them, units and spelling included ("us" in HIOPS, "µs" in ADMS'10). Where
//! a document states two results that can be judged apart, they are two items.

use super::hardware::Hardware;

/// A source document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Document {
    /// Shin et al., USENIX ATC'14: the HIOPS I/O path.
    Hiops,
    /// Foong, Veal, Hady, ADMS'10: the platform measurement method.
    Adms,
    /// Polte, Simsa, Gibson, PDSW'08: SSDs against disks with IOZone.
    Iozone,
    /// The slide deck on SSD platform bottlenecks (no title, no authors).
    Slides,
}

impl Document {
    pub const ALL: [Document; 4] = [
        Document::Hiops,
        Document::Adms,
        Document::Iozone,
        Document::Slides,
    ];

    /// The full citation title.
    pub fn title(self) -> &'static str {
        match self {
            Document::Hiops => {
                "OS I/O Path Optimizations for Flash Solid-state Drives (Shin, Chen, Oh, Eom, Yeom; USENIX ATC '14)"
            }
            Document::Adms => {
                "Towards SSD-Ready Enterprise Platforms (Foong, Veal, Hady; ADMS '10)"
            }
            // The text extraction carries no title; this is the paper's.
            Document::Iozone => {
                "Comparing Performance of Solid State Devices and Mechanical Disks (Polte, Simsa, Gibson; PDSW '08)"
            }
            Document::Slides => {
                "Slides on SSD platform bottlenecks: HBA drivers, RAID controllers, CPU and interrupt cost, TPC-C (untitled deck)"
            }
        }
    }

    /// How a report row names the document: "HIOPS Fig 7", "ADMS'10 Fig 3".
    pub fn short(self) -> &'static str {
        match self {
            Document::Hiops => "HIOPS",
            Document::Adms => "ADMS'10",
            Document::Iozone => "IOZone study",
            Document::Slides => "slides",
        }
    }

    /// The prefix every id of the document's items starts with.
    pub fn id_prefix(self) -> &'static str {
        match self {
            Document::Hiops => "hiops-",
            Document::Adms => "adms-",
            Document::Iozone => "iozone-",
            Document::Slides => "slides-",
        }
    }
}

/// What kind of item: a result drawn as a figure, a table, a result stated
/// in the text only, or how the paper measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Figure,
    Table,
    Claim,
    Method,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Figure, Kind::Table, Kind::Claim, Kind::Method];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Figure => "figure",
            Kind::Table => "table",
            Kind::Claim => "claim",
            Kind::Method => "method",
        }
    }
}

/// One item of a source document.
#[derive(Clone, Copy, Debug)]
pub struct SeedItem {
    /// Stable, short, kebab-case; starts with the document's prefix.
    pub id: &'static str,
    pub document: Document,
    pub kind: Kind,
    /// Where the document states it, as the document names it.
    pub label: &'static str,
    /// What the document found, with its numbers, in one sentence.
    pub claim: &'static str,
    /// The statistic and axes the document used.
    pub statistic: &'static str,
    /// The document's hardware and software for it.
    pub setup: &'static str,
    /// Hardware the result is about: without it this machine cannot show
    /// the result (empty: any machine can).
    pub needs: &'static [Hardware],
}

/// The items of one document, in table order.
pub fn items_of(document: Document) -> impl Iterator<Item = &'static SeedItem> {
    SEED_ITEMS.iter().filter(move |i| i.document == document)
}

/// The item with this id.
pub fn item(id: &str) -> Option<&'static SeedItem> {
    let mut found = SEED_ITEMS.iter().filter(|i| i.id == id);
    let first = found.next();
    assert!(found.next().is_none(), "seed item {id} is listed once");
    first
}

const HIOPS_RIG: &str = "six Samsung 840 Pro 256GB SATA 3.0 SSDs on one desktop-chipset AHCI controller (six SATA 3.0 ports), Intel i7-4770 3.40Ghz hyper-threaded quad core, 16GB DRAM, Linux 3.2.40";
const HIOPS_FIG7: &str = "fio 2.1.4, Direct I/O, 128 threads, six SATA 3.0 SSDs in software RAID0 (128kB stripe), ext4, noop scheduler (SCSI); Intel i7-4770, 16GB DRAM, one AHCI controller, Linux 3.2.40";
const HIOPS_FIG8: &str = "128 threads; six Samsung 840 Pro SATA 3.0 SSDs on one AHCI controller, Intel i7-4770, Linux 3.2.40";
const HIOPS_FIG9: &str = "128 threads of 512-byte direct I/O (O_DIRECT) read(), interrupts disabled; six Samsung 840 Pro SATA 3.0 SSDs on one AHCI controller, Intel i7-4770, Linux 3.2.40";
const HIOPS_KV: &str = "Aerospike 2 on six SSDs, raw devices (no file system), O_DIRECT; YCSB on an identical Intel i7 quad-core machine linked back to back through a pair of 1Gbps NICs; Linux 3.2.40";
const HIOPS_PATH: &str =
    "HIOPS-HAL I/O strategy as a Linux 3.2.40 block driver over the AHCI HAL LLD, modified VFS";

const ADMS_CORE: &str = "LSI Fusion MPT SAS adapter; one core of dual Intel Xeon X5570 2.93GHz, Intel X25-E SATA II SSDs, Linux 2.6.28, no-op scheduler, FIO synchronous I/O, 4KB random reads";
const ADMS_AHCI: &str = "platform-integrated AHCI SATA controller; one core of dual Intel Xeon X5570 2.93GHz, Intel X25-E SSDs, Linux 2.6.28, no-op scheduler, FIO synchronous 4KB random reads";
const ADMS_LSI: &str = "8-port LSI Fusion MPT SAS adapter (mpt2sas driver); one core of dual Intel Xeon X5570 2.93GHz, Intel X25-E SSDs, Linux 2.6.28, no-op scheduler, FIO synchronous 4KB random reads";
const ADMS_SCALE: &str = "LSI Fusion MPT SAS adapters, three Intel X25-E SSDs each; dual Intel Xeon X5570 2.93GHz (8 cores), Linux 2.6.28, no-op scheduler, FIO synchronous I/O up to 128 threads";
const ADMS_TABLE2: &str = "Dual 2.93GHz Intel Xeon X5570; integrated AHCI SATA adapter and 8-port LSI Fusion MPT SAS adapter; Linux 2.6.28; direct block access and ext3; No-op scheduler; Intel X25E SSDs, Hitachi Deskstar HDDs";

const IOZONE_RIGS: &str = "ext3 mounted without special options; MTron Mobi, Memoright GT and the 7200 RPM disk on an Intel Dual Core 3.2 GHz, 2 GB DRAM, Linux 2.6.22, SATA/300; Intel X25-M, X25-E and FusionIO ioDrive on an AMD x64 3 GHz, 4 GB DRAM, Linux 2.6.24, SATA/300; the 10K RPM disk on a 2.66GHz Pentium 4, 1 GB, Linux 2.6.18, Adaptec 3960D; the 15K RPM disk on a 2.66GHz Xeon, 0.9 GB, Linux 2.6.12, LSI Logic SCSI controller";
const IOZONE_RUN: &str = "IOZone single-threaded, 4GB file, request sizes 4KB-64KB, on ext3; 2008 SSDs (MTron Mobi, Memoright GT, Intel X25-M, X25-E, FusionIO ioDrive) and 7200 RPM SATA, 10K RPM SCSI 320 and 15K RPM SCSI 160 disks";
const IOZONE_PRICES: &str = "unit-one prices of 2008 from suppliers and online surveys (Table I) over the IOZone results of Tables II-V";

/// Every item of the four documents, grouped by document.
pub const SEED_ITEMS: &[SeedItem] = &[
    // ---- HIOPS (USENIX ATC'14) ----
    SeedItem {
        id: "hiops-fig1-optimized-five-devices",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 1, §1",
        claim: "With parallel 512-byte small random reads the optimized I/O path accommodated up to five of the six SSDs, at 671k IOPS.",
        statistic: "total IOPS vs number of SSDs (1-6), optimized path vs Linux SCSI path",
        setup: HIOPS_RIG,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig1-scsi-three-devices",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 1, §1",
        claim: "The current Linux SCSI based I/O path was limited at 354k IOPS, failing to accommodate more than three devices.",
        statistic: "total IOPS vs number of SSDs (1-6), optimized path vs Linux SCSI path",
        setup: HIOPS_RIG,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig7-512b-gain",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 7, §4",
        claim: "At 0.5kB I/O the optimized paths gained 89% IOPS over the original SCSI I/O path (IRQ I/O 671k IOPS at maximum, SCSI 354k).",
        statistic: "IOPS vs I/O block size (0.5kB-128kB) per path (SCSI, IRQ I/O, Poll I/O), gain over SCSI in %",
        setup: HIOPS_FIG7,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig7-4k-gain",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 7, §4",
        claim: "At 4kB I/O the optimized paths gained 32% IOPS over the original SCSI I/O path.",
        statistic: "IOPS vs I/O block size (0.5kB-128kB) per path (SCSI, IRQ I/O, Poll I/O), gain over SCSI in %",
        setup: HIOPS_FIG7,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig7-no-gain-above-8k",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 7, §4",
        claim: "For requests larger than 8kB there was no gain: bandwidth was limited by the DMI 2.0 uplink and the PCH interconnects, converging to approximately 1.5GB/s (like x4 PCI-Express 2.0, below the DMI 2.0 25Gbps (2.5GB/s) uplink), which also limited the optimized paths at 4kB.",
        statistic: "bandwidth (MB/s) and IOPS vs I/O block size (0.5kB-128kB) per path",
        setup: HIOPS_FIG7,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig7-irq-equals-poll",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 7, §4",
        claim: "There was no significant difference in IOPS between IRQ I/O (interrupts) and Poll I/O (interrupts disabled, poll thread plus cooperative contexts polling).",
        statistic: "IOPS vs I/O block size (0.5kB-128kB), IRQ I/O vs Poll I/O",
        setup: HIOPS_FIG7,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig8-nonblocking-100us",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 8, §4",
        claim: "Under high loads (128 threads) basic Non-blocking I/O showed over 100us interrupt handling latency, against up to 18us on the original SCSI I/O path, because all I/O processing and the next issue ran in the hardware interrupt handler.",
        statistic: "maximum latency of interrupt handlers (us) per post-processing scheme (SCSI, Non-blocking, +Lazy I/O, +Coop I/O)",
        setup: HIOPS_FIG8,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig8-lazy-50us",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 8, §4",
        claim: "With Lazy I/O applied (+Lazy I/O) the maximum interrupt handler latency diminished to 50us.",
        statistic: "maximum latency of interrupt handlers (us) per post-processing scheme (SCSI, Non-blocking, +Lazy I/O, +Coop I/O)",
        setup: HIOPS_FIG8,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig8-coop-20us",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 8, §4",
        claim: "With both Lazy I/O and Coop I/O applied (+Coop I/O) the maximum interrupt handler latency dropped to 20us, similar to the original SCSI I/O path's 18us.",
        statistic: "maximum latency of interrupt handlers (us) per post-processing scheme (SCSI, Non-blocking, +Lazy I/O, +Coop I/O)",
        setup: HIOPS_FIG8,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig9-coop-poll-600k",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 9, §4",
        claim: "With opportunistic completion checks in both issue and completion paths helping the poll thread ('w/ Coop Poll'), polling kept over 600k IOPS even as the poll interval increased up to 128us.",
        statistic: "IOPS vs poll interval (up to 128us), 'Async poll' vs 'w/ Coop Poll'",
        setup: HIOPS_FIG9,
        needs: &[],
    },
    // The text gives the lone poll thread no number; the figure plots it
    // against the cooperative poll, which alone is credited with holding.
    SeedItem {
        id: "hiops-fig9-async-poll",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 9, §4",
        claim: "A single poll thread polling alone ('Async poll') is the figure's other line: only the cooperative poll is credited with holding its IOPS as the interval grows, so the lone thread is the one that falls (no number stated).",
        statistic: "IOPS vs poll interval (up to 128us), 'Async poll' vs 'w/ Coop Poll'",
        setup: HIOPS_FIG9,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig10-peak",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 10, §4",
        claim: "The highest key-value throughput was 119kops/sec with IRQ I/O, while SCSI I/O showed 110kops/sec and Poll I/O 101kops/sec.",
        statistic: "key-value ops/s vs YCSB client threads (up to 256) per I/O path, peak",
        setup: HIOPS_KV,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig10-gain-32-clients",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 10, §1, §4",
        claim: "The gain of IRQ I/O over SCSI was 7% at the highest throughput (32 clients).",
        statistic: "key-value ops/s vs YCSB client threads, IRQ I/O over SCSI I/O in %",
        setup: HIOPS_KV,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig10-gain-256-clients",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 10, §1, §4",
        claim: "SCSI I/O degraded beyond 128 clients and the optimizations mitigated the collapse: IRQ I/O gained 108% over SCSI under the highest load (256 clients).",
        statistic: "key-value ops/s vs YCSB client threads, IRQ I/O over SCSI I/O in %",
        setup: HIOPS_KV,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig10-poll-below-scsi",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 10, §4",
        claim: "Poll I/O fell below SCSI I/O because the key-value store could only load the storage up to 150k IOPS at its peak, not high enough relative to Fig 7, which motivates a poll & IRQ hybrid.",
        statistic: "key-value ops/s vs YCSB client threads per I/O path; storage IOPS under the store",
        setup: HIOPS_KV,
        needs: &[],
    },
    SeedItem {
        id: "hiops-fig2-completion-contexts",
        document: Document::Hiops,
        kind: Kind::Figure,
        label: "Fig 2, Fig 3, §2",
        claim: "Each added context adds a scheduling delay: the Linux SCSI completion path has at least two scheduling points (hardware IRQ, an IPI-steered software interrupt, the waiting thread) plus a background queue run for issues a busy device refused, and the NVMe driver path, without IPIs or queue runs, still schedules an IRQ thread and the waiting thread.",
        statistic: "contexts and scheduling points per completed I/O (diagram, no numbers)",
        setup: "Linux SCSI I/O path for SATA/SAS SSDs on AHCI and SCSI based SAS controllers; the NVMe-Express Linux driver with threaded interrupts",
        needs: &[],
    },
    SeedItem {
        id: "hiops-flash-latency-over-20us",
        document: Document::Hiops,
        kind: Kind::Claim,
        label: "§1",
        claim: "Flash SSD access latency is lower than hard disk drives' but fails to go under the range (under 20us) where poll can be beneficial, even on high-end PCI-e flash devices.",
        statistic: "device access latency against the 20us below which polling pays",
        setup: "flash SSDs of 2014, SATA 3.0 and PCI-e (Fusion-io ioDrive II cited)",
        needs: &[Hardware::FlashSsd],
    },
    SeedItem {
        id: "hiops-completion-interval",
        document: Document::Hiops,
        kind: Kind::Claim,
        label: "§3.3",
        claim: "Under high loads the processing times of individual I/O commands are unpredictable, but the interval between multiple I/O commands completing in parallel is predictable (0us to 20us).",
        statistic: "interval between successive completions on one controller under high load",
        setup: HIOPS_RIG,
        needs: &[],
    },
    SeedItem {
        id: "hiops-kv-workload",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§2",
        claim: "The small random reads the paper targets are those of SSD backed key value stores, where a 30:1 GET():SET() ratio is observed with 90% of values less than 500 bytes.",
        statistic: "GET:SET ratio and value-size distribution of the workload",
        setup: "large-scale key-value store workload analysis cited from Atikoglu et al. (SIGMETRICS'12)",
        needs: &[],
    },
    SeedItem {
        id: "hiops-method-fio",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§4, Fig 7 caption",
        claim: "Micro-benchmarks ran fio 2.1.4 with Direct I/O and 128 threads over six SATA 3.0 SSDs in software RAID0 (128kB stripe) with ext4, and the noop scheduler on the SCSI path.",
        statistic: "IOPS and bandwidth per I/O block size, per I/O path",
        setup: HIOPS_FIG7,
        needs: &[],
    },
    SeedItem {
        id: "hiops-method-platform",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§4 (Implementation, Experimental Setup)",
        claim: "The optimizations ran as loadable modules on Linux 3.2.40 (HAL 6,187 lines, HAL I/O strategy 1,766, AHCI HAL LLD 2,424 original plus 2,632 adopted from Linux, VFS change 44 lines) on a PC with an i7-4770 3.40Ghz hyper-threaded quad core, 16GB DRAM and six Samsung 840 Pro 256GB SATA 3.0 SSDs on a single AHCI controller.",
        statistic: "platform description",
        setup: HIOPS_RIG,
        needs: &[],
    },
    SeedItem {
        id: "hiops-method-kv",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§4 (Key Value Storage), Fig 10 caption",
        claim: "The key-value evaluation loaded Aerospike 2 with YCSB 100% get at increasing client threads, the store doing I/O on raw devices with O_DIRECT over six SSDs, the client machine linked back to back through a pair of 1Gbps NICs.",
        statistic: "key-value ops/s vs YCSB client threads",
        setup: HIOPS_KV,
        needs: &[],
    },
    SeedItem {
        id: "hiops-design-nonblocking",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§3.3, Fig 6-(b)",
        claim: "Non-blocking I/O: every command is first enqueued in a software FIFO and issued while tags are free, otherwise by another issuing thread or by the hardware interrupt, where free tags are generated, so no context blocks for a tag and no background queue run is needed.",
        statistic: "design (contexts blocked for tags, background queue runs)",
        setup: HIOPS_PATH,
        needs: &[],
    },
    SeedItem {
        id: "hiops-design-lazy",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§3.3, Fig 6-(c)",
        claim: "Lazy I/O processing: the thread waiting in the strategy's I/O-wait function (called instead of io_schedule()) post-processes the completion itself, with no bottom half or threaded interrupt, and sleeps with its CPU affinity limited to the issuing CPU so it wakes there.",
        statistic: "design (contexts per completion, wake-up CPU)",
        setup: HIOPS_PATH,
        needs: &[],
    },
    SeedItem {
        id: "hiops-design-coop",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§3.3, Fig 6-(d)",
        claim: "Cooperative I/O processing: every I/O thread enters a cooperative context on each request from both issue and completion paths, stealing completion work with fetch_event calls and issuing for other threads, so an owner's I/O completes even when the owner is not scheduled.",
        statistic: "design (helper contexts per I/O)",
        setup: HIOPS_PATH,
        needs: &[],
    },
    SeedItem {
        id: "hiops-design-poll",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§3.3, Fig 6-(e)",
        claim: "Poll based I/O: under higher loads interrupts are disabled and a poll thread polls the whole controller, releasing the CPU after each cycle on high resolution timers, while cooperative contexts poll opportunistically, which allows a rather coarse poll (16us to 32us).",
        statistic: "design (poll interval, pollers)",
        setup: HIOPS_PATH,
        needs: &[],
    },
    SeedItem {
        id: "hiops-design-hybrid",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§3.3, §4 (Fig 10)",
        claim: "A hybrid switching between interrupts and poll was left as future work; the current level of parallelism (occupied queue depth) combined with the current level of IOPS is the candidate indicator for the switch.",
        statistic: "design (mode switch indicators: occupied queue depth, IOPS)",
        setup: HIOPS_PATH,
        needs: &[],
    },
    SeedItem {
        id: "hiops-hal-operations",
        document: Document::Hiops,
        kind: Kind::Method,
        label: "§3.1, §3.2, Fig 4, Fig 5",
        claim: "The HAL exposes queues, tags and notifications through get_free_tags, bind_tag_cmd, an implicit begin_cmd and issue_tags (batched) on issue and check_event, fetch_event, detach_tag_cmd, release_tags and end_cmd on completion; a failing get_free_tags means the device is busy.",
        statistic: "interface (operations and their order)",
        setup: "HIOPS-HAL with an AHCI low level driver based on Linux 3.2.40 libata",
        needs: &[],
    },
    // ---- Towards SSD-Ready Enterprise Platforms (ADMS'10) ----
    SeedItem {
        id: "adms-ssd-vs-hdd",
        document: Document::Adms,
        kind: Kind::Claim,
        label: "Abstract, §1",
        claim: "SSDs deliver a 2–3 orders of magnitude increase in IOPS over HDDs at latencies 1/100 of theirs: an X25-E delivers 40,000 read IOPS, a C300 60,000 and an ioDrive 120,000, so as few as 8 direct-attached SSDs reach one million IOPS.",
        statistic: "random-read IOPS and latency, SSD against HDD (vendor figures)",
        setup: "Intel X25-E SATA II, Crucial C300 SATA III and Fusion-io ioDrive (PCIe) SSDs against HDDs, as reported by vendors",
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    // 20 of 180 µs is 11%: §5 and §4.1's 26% cannot both be the same split.
    SeedItem {
        id: "adms-fig3-platform-share",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 3, §4.1",
        claim: "The SSD is still the major contributor of latency: the platform only contributes 26% of the total latency of a 4KB I/O.",
        statistic: "total latency of a 4KB read as seen by the application, split into media and platform (software, queues, chipset, adapter, link transfer)",
        setup: "Intel X25-E SATA II SSD on the 3Gbps SATA II link; Xeon X5570, Linux 2.6.28, no-op scheduler with nearly zero queue wait",
        needs: &[],
    },
    SeedItem {
        id: "adms-latency-180us",
        document: Document::Adms,
        kind: Kind::Claim,
        label: "§5 (1)",
        claim: "I/O latency for 4KB reads is 180µs, of which the platform hardware and software make up 20µs and the SSD the rest.",
        statistic: "latency of one 4KB read, platform part and device part",
        setup: "Intel X25-E SATA II SSD; Xeon X5570, Linux 2.6.28, no-op scheduler",
        needs: &[],
    },
    SeedItem {
        id: "adms-fig4-ahci-35k-clocks",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 4, §4.2",
        claim: "Processing an I/O required about 35,000 clocks with disks connected via AHCI, the largest hotspot being the driver's return path (ahci_interrupt() and ahci_scr_read()).",
        statistic: "CPU clocks per I/O from issue to completion by function, single core",
        setup: ADMS_AHCI,
        needs: &[Hardware::Ahci],
    },
    SeedItem {
        id: "adms-syscall-924-clocks",
        document: Document::Adms,
        kind: Kind::Claim,
        label: "§4.2, Fig 4",
        claim: "User-kernel-user transitions (system call and return) took 924 clocks.",
        statistic: "CPU clocks per system call round trip",
        setup: ADMS_AHCI,
        needs: &[],
    },
    SeedItem {
        id: "adms-uc-reads",
        document: Document::Adms,
        kind: Kind::Claim,
        label: "§4.2",
        claim: "Uncacheable (UC) reads from the adapter's memory-mapped registers averaged 2,100 clocks per UC read, and an MSI interface that pushes status was predicted to save about 8,400 clocks/IO by removing them.",
        statistic: "CPU clocks per UC register read; clocks per I/O saved without them",
        setup: ADMS_AHCI,
        needs: &[Hardware::Ahci],
    },
    SeedItem {
        id: "adms-fig5-lsi-25k-clocks",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 5, §4.2",
        claim: "Through the MSI-based LSI adapter, with no UC reads and the SAS/SATA conversion offloaded (saving 1,600 clocks on the host), I/O processing incurred 25,000 clocks/IO, a 30% improvement in processing efficiency over AHCI.",
        statistic: "CPU clocks per I/O by layer, issue plus completion, 4KB reads, single core",
        setup: ADMS_LSI,
        needs: &[Hardware::SasHba],
    },
    SeedItem {
        id: "adms-fig6-coalescing-20k-clocks",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 6, §4.2",
        claim: "Interrupt coalescing shrinks the LSI driver's return path (5250 clocks/IO) until only 650 clocks remain in it at large numbers of coalesced interrupts, about 20,000 clocks/IO for throughput-intensive workloads.",
        statistic: "CPU clocks per I/O vs number of coalesced interrupts",
        setup: ADMS_LSI,
        needs: &[],
    },
    SeedItem {
        id: "adms-overhead-by-layer",
        document: Document::Adms,
        kind: Kind::Claim,
        label: "Abstract, §1, §4.2",
        claim: "Except for the block layer, most processing overhead lay in generic device/OS functions (driver, copies, interrupts, context switches), not in SCSI or ATA processing; beyond the driver the largest overheads were context switching and the block layer, whose clocks/instruction (1.3) is already small.",
        statistic: "CPU clocks per I/O by layer; clocks per instruction of the block layer",
        setup: ADMS_LSI,
        needs: &[],
    },
    SeedItem {
        id: "adms-fig7-ext3-3400-clocks",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 7, §4.2",
        claim: "The file system (ext3) adds only 3,400 clocks (<15%) to the path of a read whose meta-data is already in cache.",
        statistic: "CPU clocks per I/O, direct I/O to the block device vs through ext3",
        setup: "ext3 with its meta-data in the buffer cache; LSI Fusion MPT SAS adapter, one core of a Xeon X5570, Intel X25-E SSDs, Linux 2.6.28",
        needs: &[],
    },
    SeedItem {
        id: "adms-fig7-buffered-2-1-clocks-per-byte",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 7, §4.2",
        claim: "The extra cost of buffered I/O's copy and cache management is a near-linear function of request size, 2.1 clocks/byte.",
        statistic: "CPU clocks per I/O vs request size, buffered vs direct",
        setup: "buffered I/O through the page cache (the whole path, not a copy from cache); LSI adapter, one core of a Xeon X5570, Intel X25-E SSDs, Linux 2.6.28",
        needs: &[],
    },
    SeedItem {
        id: "adms-fig8-one-core-129k",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 8, §4.3",
        claim: "On a single core 4KB random reads reached 129,000 IOPS from 3 SSDs, at which point the core was fully saturated.",
        statistic: "IOPS and CPU utilization, one core, 3 SSDs",
        setup: ADMS_CORE,
        needs: &[],
    },
    SeedItem {
        id: "adms-fig9-one-adapter-177k",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 9, §4.3, §5",
        claim: "With all eight cores available, throughput stalled at 177,000 IOPS with one adapter, the IOPS of 4 SSDs.",
        statistic: "IOPS and average CPU utilization vs cores, 8 SSDs on one adapter",
        setup: "one LSI Fusion MPT SAS adapter with 8 Intel X25-E SSDs; dual Intel Xeon X5570 2.93GHz (8 cores), Linux 2.6.28, FIO synchronous 4KB random reads",
        needs: &[],
    },
    SeedItem {
        id: "adms-fig10-four-adapters-445k",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 10, §4.3, §5",
        claim: "Adding adapters one at a time from one to four with one core each, three SSDs per adapter, throughput scaled within 15% of linear up to 445K IOPS, so the single adapter was the bottleneck.",
        statistic: "IOPS measured vs ideal (linear) against cores & adapters / number of SSDs, 4KB random reads",
        setup: ADMS_SCALE,
        needs: &[],
    },
    SeedItem {
        id: "adms-scaling-half-the-cores",
        document: Document::Adms,
        kind: Kind::Claim,
        label: "§4.3, §5 (3), Abstract",
        claim: "At 445K IOPS I/O processing saturated four cores, half the available cores on the platform (50% average CPU utilization).",
        statistic: "average CPU utilization at the highest IOPS",
        setup: ADMS_SCALE,
        needs: &[],
    },
    SeedItem {
        id: "adms-fig11-3gbs",
        document: Document::Adms,
        kind: Kind::Figure,
        label: "Fig 11, §4.3, §5",
        claim: "With 64KB I/O across the four adapters and 12 SSDs data throughput reached 3GB/s, within 2% of linear.",
        statistic: "MB/s measured vs ideal (linear) against cores & adapters / number of SSDs, 64KB reads",
        setup: ADMS_SCALE,
        needs: &[],
    },
    SeedItem {
        id: "adms-aio-no-gain",
        document: Document::Adms,
        kind: Kind::Claim,
        label: "§6 (2)",
        claim: "No processing cost improvement was observed with asynchronous I/O (AIO): Linux's kernel thread emulating AIO moved the context switch but did not eliminate it.",
        statistic: "CPU clocks per I/O, synchronous I/O vs AIO",
        setup: "Linux 2.6.28 AIO (emulated by a kernel thread) against FIO synchronous I/O; dual Intel Xeon X5570 2.93GHz, Intel X25-E SSDs",
        needs: &[],
    },
    SeedItem {
        id: "adms-table1-io-paths",
        document: Document::Adms,
        kind: Kind::Table,
        label: "Table 1, §2",
        claim: "Four major I/O paths (direct or buffered, to a block device or to files): the file paths add the file system and its meta-data, the buffered paths add cache management and copies, and all share VFS, the I/O stack, DMA and the hardware interface.",
        statistic: "components present in each of the four paths",
        setup: "Linux I/O subsystem (Fig 2): VFS, ext3, buffer cache, generic block layer, I/O scheduler, SCSI mid-layer, libata/libsas, HBA driver",
        needs: &[],
    },
    SeedItem {
        id: "adms-table2-platform-settings",
        document: Document::Adms,
        kind: Kind::Table,
        label: "Table 2, §3",
        claim: "The platform parameters needed to duplicate the measurements: SMT, CPU low-power states and frequency scaling disabled; Linux tickless timer disabled; 10ms scheduler time slice; polling when idle.",
        statistic: "platform configuration",
        setup: ADMS_TABLE2,
        needs: &[],
    },
    SeedItem {
        id: "adms-method-workload",
        document: Document::Adms,
        kind: Kind::Method,
        label: "Table 2, §3, §2",
        claim: "FIO synchronous I/O with up to 128 concurrent threads issued fixed-size 4KB random reads only (writes take a nearly identical path), through the No-op I/O scheduler, with direct I/O to the block device as the primary path.",
        statistic: "IOPS, clocks per I/O, CPU utilization",
        setup: ADMS_TABLE2,
        needs: &[],
    },
    SeedItem {
        id: "adms-method-clocks-per-io",
        document: Document::Adms,
        kind: Kind::Method,
        label: "§3, §4.2",
        claim: "Processing efficiency is measured as clocks (CPU cycles) per I/O on a single core, path timing read from the processor's timestamp counter (rdtsc()), validated with OProfile sampling, and OS statistics taken from mpstat and iostat.",
        statistic: "CPU clocks per I/O by layer (rdtsc, OProfile); CPU utilization (mpstat, iostat)",
        setup: ADMS_TABLE2,
        needs: &[],
    },
    SeedItem {
        id: "adms-method-latency-split",
        document: Document::Adms,
        kind: Kind::Method,
        label: "§4.1",
        claim: "Total I/O latency = time due to media + time due to platform: software latency derived from the processing cost measurements, media latency and payload transfer time measured with a SATA bus analyzer, with the no-op scheduler and nearly zero queue wait validated.",
        statistic: "latency from issue to last byte of completion, device part and platform part",
        setup: ADMS_TABLE2,
        needs: &[],
    },
    // ---- IOZone study (PDSW'08) ----
    // The extraction garbles the command ("-1 0 -1 1 -i 2 -s 49"); the
    // paper's parameter list gives -i 0, -i 1, -i 2 and -s 4g.
    SeedItem {
        id: "iozone-method-command",
        document: Document::Iozone,
        kind: Kind::Method,
        label: "§II",
        claim: "Every device ran `iozone -Raz -e -i 0 -i 1 -i 2 -s 4g -U`: sequential read and write, random read and random write for request sizes 4KB to 64KB, a sync before ending each test, a 4GB test file larger than memory, the file system remounted before each test.",
        statistic: "MB/s for sequential, IOPS for random, per request size",
        setup: IOZONE_RIGS,
        needs: &[],
    },
    SeedItem {
        id: "iozone-method-precondition",
        document: Document::Iozone,
        kind: Kind::Method,
        label: "§III",
        claim: "Before the tests several writes went to every logical address with dd, so that the SSD controllers must erase blocks while servicing writes.",
        statistic: "device state before measuring",
        setup: IOZONE_RUN,
        needs: &[],
    },
    SeedItem {
        id: "iozone-method-five-runs",
        document: Document::Iozone,
        kind: Kind::Method,
        label: "§III",
        claim: "The Intel X25-M, X25-E and FusionIO ioDrive, the only devices with varying performance, ran five times and are shown as the average with standard deviation error bars; the others ran once.",
        statistic: "mean of five runs with standard deviation error bars",
        setup: IOZONE_RUN,
        needs: &[],
    },
    SeedItem {
        id: "iozone-table1-devices",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table I",
        claim: "The devices range from $110 ($0.15 per GB, the 7200 RPM Barracuda) to $2400 ($30.00 per GB, the ioDrive), with access times of 0.05-0.1 msec for the SSDs and 3.9-4.7 msec for the disks.",
        statistic: "erase cycles, capacity, price, dollars per gigabyte, access time and ship date per device",
        setup: "MTron Mobi, Memoright GT, Intel X25-M, X25-E, FusionIO ioDrive; Seagate Barracuda 7200.11, ST3300007LW (10K), ST3300655LC (15K)",
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-table2-seq-read",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table II, Fig 1, §III-A",
        claim: "Sequential reads: the consumer SSDs just below 90 MBs per second, the Intel SSDs just above 200, the FusionIO above 400 and the disks between 45 and 65, so the SSDs read sequentially 2x to 10x faster than the 7200 RPM disk.",
        statistic: "MB/s vs request size 4KB-64KB per device",
        setup: IOZONE_RIGS,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    // Table III gives the X25-M 60.06-68.77 MB/s, below the text's 75.
    SeedItem {
        id: "iozone-table3-seq-write",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table III, Fig 2, §III-B",
        claim: "Sequential writes are fairly constant across request sizes: the consumer SSDs and the X25-M between 75 and 100 MBs per second, the X25-E and FusionIO between 150 and 175, the disks between 45 and 65, so SSDs write sequentially 1.5x to 5x faster than a disk.",
        statistic: "MB/s vs request size 4KB-64KB per device",
        setup: IOZONE_RIGS,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-table4-rand-read-4k",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table IV, §III-C",
        claim: "At 4KB random reads the consumer SSDs and the X25-M achieve around 4,000 IOPS (4101.25-4458.00), the X25-E 7,000 (6998.00), the FusionIO up to 20,000 (21093.35) and the disks 100 to 200 (109.75-291.50).",
        statistic: "IOPS at 4KB random reads per device",
        setup: IOZONE_RIGS,
        needs: &[],
    },
    SeedItem {
        id: "iozone-fig3-rand-read-shape",
        document: Document::Iozone,
        kind: Kind::Figure,
        label: "Fig 3, Table IV, §III-C",
        claim: "All SSDs' random-read IOPS decrease with increasing request size (the FusionIO from 21093.35 at 4KB to 5659.12 at 64KB) while the disks' stay more constant across request sizes.",
        statistic: "IOPS (log scale) vs request size 4KB-64KB per device",
        setup: IOZONE_RIGS,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-rand-read-factor",
        document: Document::Iozone,
        kind: Kind::Claim,
        label: "Abstract, §III-C, §V",
        claim: "For small random reads the SSDs perform 40x to 200x better than a magnetic disk (up to 200x).",
        statistic: "ratio of SSD to disk IOPS at small random reads",
        setup: IOZONE_RIGS,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-rand-write-consumer-below-disks",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table V, §III-D",
        claim: "The consumer SSDs perform even worse than the disks for small random writes, between 100 and 200 IOPS (288.75 and 148.50 at 4KB), while the disks achieve 300 to 500 IOPS, which ext3's grouped, ordered writes explain.",
        statistic: "IOPS at 4KB random writes per device",
        setup: IOZONE_RIGS,
        needs: &[],
    },
    SeedItem {
        id: "iozone-rand-write-enterprise",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table V, §III-D",
        claim: "The enterprise SSDs Intel X25-M, X25-E and FusionIO achieve 9,000, 12,000 and 40,000 random-write IOPS (8917.75, 12104.50 and 39865.35 at 4KB).",
        statistic: "IOPS at 4KB random writes per device",
        setup: IOZONE_RIGS,
        needs: &[Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-fig4-rand-write-shape",
        document: Document::Iozone,
        kind: Kind::Figure,
        label: "Fig 4, Table V, §III-D",
        claim: "The enterprise SSDs' random-write IOPS decrease with increasing request size while the consumer SSDs' and the disks' stay more constant across request sizes.",
        statistic: "IOPS (log scale) vs request size 4KB-64KB per device",
        setup: IOZONE_RIGS,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-rand-write-factor",
        document: Document::Iozone,
        kind: Kind::Claim,
        label: "Abstract, §III-D, §V",
        claim: "For small random writes the enterprise SSDs perform 30x to 135x better than a magnetic disk (up to 135x).",
        statistic: "ratio of SSD to disk IOPS at small random writes",
        setup: IOZONE_RIGS,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    // Table VI has the X25-M ($3.35) below the X25-E ($3.64) for sequential
    // reads; the text names the X25-E the best SSD for both.
    SeedItem {
        id: "iozone-table6-sequential",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table VI, §III-E, §V",
        claim: "For sequential reads and writes the 7200 RPM disk is the most efficient device in price per MBs per second ($2.34, $2.59), the Intel X25-E the best of the SSDs ($3.64, $4.47), so SSDs only approach disks' price per performance for sequential workloads.",
        statistic: "dollars per MB/s per device, sequential reads and writes",
        setup: IOZONE_PRICES,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-table6-random-read",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table VI, §III-E",
        claim: "For random reads all SSDs do very well against the disks in price per IOPS ($0.08-$0.16 against $1.00-$1.55), the MTron Mobi offering the best ratio ($0.08).",
        statistic: "dollars per IOPS per device, random reads",
        setup: IOZONE_PRICES,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-table6-random-write",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table VI, §III-E",
        claim: "For random writes only the enterprise SSDs do much better than the disks in price per IOPS ($0.06-$0.08 against $0.34-$0.80; consumer SSDs $1.77 and $2.49), the FusionIO ioDrive offering the best ratio ($0.06) and the best balance across random reads and writes.",
        statistic: "dollars per IOPS per device, random writes",
        setup: IOZONE_PRICES,
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-table7-advertised",
        document: Document::Iozone,
        kind: Kind::Table,
        label: "Table VII, §III-E",
        claim: "Price per advertised performance, from vendor data sheets (the FusionIO's from IOZone on XFS), is lower still: $2.92-$3.92 per MBs/sec for sequential reads and $0.02-$0.06 per IOPS for random reads.",
        statistic: "dollars per MB/s and per IOPS at the vendors' advertised performance",
        setup: "vendor data sheets of the five SSDs and the Table I prices",
        needs: &[Hardware::FlashSsd],
    },
    SeedItem {
        id: "iozone-shallow-queue",
        document: Document::Iozone,
        kind: Kind::Claim,
        label: "§II",
        claim: "Single-threaded IOZone over ext3 issues one access at a time, a shallow queue depth at the device, so some SSDs fell short of their advertised performance while the disks did not.",
        statistic: "measured against data-sheet performance at queue depth one",
        setup: IOZONE_RIGS,
        needs: &[],
    },
    // ---- Slides on SSD platform bottlenecks ----
    // The deck has no slide numbers; labels carry each slide's title.
    SeedItem {
        id: "slides-hba-driver-delay",
        document: Document::Slides,
        kind: Kind::Figure,
        label: "slide \"HBA – Case1 : Delay Reduction by Driver Update\"",
        claim: "The proper chipset driver reduces the HBA delay: IRST 9.0 against IMSM 8.9 gives a \"~10 ms reduction between Set Device Bit and Next Command\" (the chart reads 24% for IMSM and 59% for IRST).",
        statistic: "delay between the device's Set Device Bit and the next command, per driver",
        setup: "Intel Core i7 920, Intel X58 chipset, Windows 7, SSD; IMSM 8.9 vs IRST 9.0",
        needs: &[Hardware::WindowsDriver],
    },
    SeedItem {
        id: "slides-hba-driver-80k",
        document: Document::Slides,
        kind: Kind::Figure,
        label: "slide \"HBA – Case2 : IOPS enhancement by Driver Update\"",
        claim: "With the Windows 7 default driver the IOPS of small requests (4 KB) saturate at 80K while the bandwidth of large requests (64 KB) scales up with SSDs; the IRST driver makes small-request IOPS scalable.",
        statistic: "IOPS (4 KB) and bandwidth (64 KB) vs number of SSDs, per driver",
        setup: "Intel Core i7 2600 @ 3.7 GHz quad-core, Intel P67 Express chipset SATA ports, four SSDs, Windows 7; default driver vs IRST 9.0",
        needs: &[Hardware::WindowsDriver],
    },
    SeedItem {
        id: "slides-raid-p410i-60k",
        document: Document::Slides,
        kind: Kind::Figure,
        label: "slide \"IOPS Saturation in Server RAID – HP-ML370 (1)\"",
        claim: "Behind a Smart Array P410i in RAID 0 the IOPS saturate at ~60K (1KB at variable queue depth, and queue depth 32 at various sizes), bandwidth saturating at 2 SSDs for small sizes.",
        statistic: "(a) bandwidth vs SSDs, (B) IOPS at queue depth 32 vs request size, (C) IOPS at 1KB vs queue depth",
        setup: "HP-ML370 server, Intel Xeon E5520, Intel 5500 chipset, Smart Array P410i RAID controller, five SSDs in RAID 0 on SATA2 3Gb/s (300MB/s) links, IOMeter",
        needs: &[Hardware::RaidController],
    },
    SeedItem {
        id: "slides-raid-perc-30k",
        document: Document::Slides,
        kind: Kind::Figure,
        label: "slide \"IOPS Saturation in Server RAID – Dell-T410 (2)\"",
        claim: "Behind a PERC 6/i in RAID 0 bandwidth is scalable for large requests but not for small ones, whose IOPS seem to saturate at ~30K.",
        statistic: "bandwidth and IOPS vs number of SSDs and request size",
        setup: "Dell-T410 server, Intel Xeon E5502, Intel 5500 chipset, Dell PERC 6/I SAS RAID controller on PCI Express, five SSDs in RAID 0 on SATA2 3Gb/s (300MB/s) links, IOMeter",
        needs: &[Hardware::RaidController],
    },
    SeedItem {
        id: "slides-cpu-two-ssds-per-core",
        document: Document::Slides,
        kind: Kind::Figure,
        label: "slide \"Problem : CPU Usage and SSD Bandwidth\"",
        claim: "When one core is used, 4 KB random-read bandwidth does not scale up with more than 2 SSDs and CPU usage reaches 90%, while with an HDD bandwidth and CPU usage stay at a very low level.",
        statistic: "bandwidth and CPU usage vs number of SSDs, per number of cores",
        setup: "Intel Core i3 530 @2.97 GHz dual-core, Intel P55 Express chipset, four SSDs on SATA2 3Gb/s ports, Windows 7 with the Intel driver, IOMeter 4 KB random read",
        needs: &[],
    },
    SeedItem {
        id: "slides-cpu-fs-bandwidth",
        document: Document::Slides,
        kind: Kind::Figure,
        label: "slide \"Problem : CPU Usage and SSD Bandwidth\"",
        claim: "Bandwidth reduces for file system operations against access to the raw SSDs.",
        statistic: "bandwidth vs number of SSDs, raw device vs file system",
        setup: "Intel Core i3 530 @2.97 GHz dual-core, Intel P55 Express chipset, four SSDs on SATA2 3Gb/s ports, Windows 7 with the Intel driver, IOMeter 4 KB random read",
        needs: &[],
    },
    SeedItem {
        id: "slides-interrupt-5-35us",
        document: Document::Slides,
        kind: Kind::Claim,
        label: "slide \"Improvement Point[1] : Interrupt Handling\"",
        claim: "Disk interrupt overhead is about 5 us ~ 35 us per interrupt, a burden on the CPU for SSDs of high IOPS.",
        statistic: "interrupt service time per I/O",
        setup: "cited from Moore et al., kernel instrumentation of interrupt handlers (ICCD 2003)",
        needs: &[],
    },
    SeedItem {
        id: "slides-interrupt-cpu-per-second",
        document: Document::Slides,
        kind: Kind::Claim,
        label: "slide \"Improvement Point[1] : Interrupt Handling\"",
        claim: "Assuming 10 us of interrupt handling per I/O, an SSD at 43K IOPS spends 43K (IOPS) x 10 us = 0.43s of CPU per second on interrupt handling.",
        statistic: "IOPS x interrupt service time per I/O = CPU seconds per second",
        setup: "Windows 7, IOMeter, SSD with 43K IOPS @ 4KB random read, QD=32",
        needs: &[],
    },
    SeedItem {
        id: "slides-qd1-latency-split",
        document: Document::Slides,
        kind: Kind::Claim,
        label: "slide \"Improvement Point[1] : Interrupt Handling\"",
        claim: "A 4KB read at QD=1 takes 220 us of SSD latency plus 60 us of host latency (interrupt handling and the rest).",
        statistic: "read latency at 4KB, QD=1, split into SSD and host",
        setup: "Windows 7, IOMeter, SSD with 43K IOPS @ 4KB random read, QD=32",
        needs: &[],
    },
    SeedItem {
        id: "slides-kernel-stack",
        document: Document::Slides,
        kind: Kind::Claim,
        label: "slide \"Improvement Point[2] : Kernel Storage Stack\"",
        claim: "The kernel storage stack is designed for HDDs (seek time proportional to LBA distance, symmetric read/write) while SSD access is independent of LBA and asymmetric (SLC R/P/E 25 us/200 us/1.5 ms, MLC 60 us/800 us/2.5 ms), so the disk scheduler, buffer replacement, block device driver layer, prefetching and swapping are to be revised.",
        statistic: "stack parts to revise; flash read/program/erase times",
        setup: "a general-purpose OS storage stack; flash cell timings from data sheets",
        needs: &[],
    },
    SeedItem {
        id: "slides-ssd-rw-latency",
        document: Document::Slides,
        kind: Kind::Claim,
        label: "slide \"Improvement Point[2] : Kernel Storage Stack\"",
        claim: "An SSD reads fast and writes slow with variation (GC): read 0.28 ms, write 0.1 ms at QD=1 but 1 ms at QD=32.",
        statistic: "read and write latency at QD=1 and QD=32",
        setup: "one SATA SSD (unnamed)",
        needs: &[Hardware::FlashSsd],
    },
    SeedItem {
        id: "slides-tpcc-ssd-vs-hdd",
        document: Document::Slides,
        kind: Kind::Figure,
        label: "slide \"TPC-C Analysis – Performance Comparison (SSD vs HDD)\"",
        claim: "With small data sizes most reads hit the server-side cache and the SSD performs like the HDD; the SSD/HDD performance ratio and the read load increase as the number of warehouses increases.",
        statistic: "TPC-C performance ratio SSD/HDD and read load vs warehouses (10-100, 700MB-7 GB)",
        setup: "DELL T710 (Intel XEON Quad), MySQL, Windows Server 2008, 3 GB RAM (fixed), SSD vs HDD (WD5000AAKS); Benchmark Factory, 100 users, no delay",
        needs: &[Hardware::MagneticDisk, Hardware::FlashSsd],
    },
    SeedItem {
        id: "slides-tpcc-raid-no-gain",
        document: Document::Slides,
        kind: Kind::Figure,
        label: "slides \"TPC-C Performance in RAID : PC\" and \": HPML370 G6\"",
        claim: "SSD RAID does not show TPC-C performance improvement, neither in RAID0 on the P55 chipset of a PC nor on the Smart Array P410i of an HP ML370 G6.",
        statistic: "TPC-C performance vs number of SSDs in RAID0",
        setup: "MySQL, TPC-C by Benchmark Factory (100 users, 100 warehouses, no delay); Intel i3 PC with P55 Express chipset RAID0, and HP ML370 G6 (Xeon quad core, Windows Server 2008) with Smart Array P410i",
        needs: &[Hardware::RaidController],
    },
    SeedItem {
        id: "slides-method-iometer",
        document: Document::Slides,
        kind: Kind::Method,
        label: "slide \"TPC-C Performance in RAID : PC\" (IO Meter test), and the device slides",
        claim: "Device measurements use IOMeter: 4KB random reads at QD=32 for IOPS and QD=1 for latency; under RAID0 with a 128 KB stripe unit, 1 thread at QD32 (4K random read), QD8 and QD1 (random read/write).",
        statistic: "IOMeter IOPS, bandwidth and latency per queue depth",
        setup: "IOMeter on Windows 7 (device slides); RAID0 within the Intel P55 Express chipset with a 128 KB stripe unit (RAID slide)",
        needs: &[],
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn is_kebab(id: &str) -> bool {
        !id.is_empty()
            && !id.starts_with('-')
            && !id.ends_with('-')
            && !id.contains("--")
            && id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    }

    #[test]
    fn ids_are_unique_kebab_case_and_carry_their_document() {
        let mut seen = HashSet::new();
        for i in SEED_ITEMS {
            assert!(is_kebab(i.id), "{} is not kebab-case", i.id);
            assert!(seen.insert(i.id), "{} appears twice", i.id);
            assert!(
                i.id.starts_with(i.document.id_prefix()),
                "{} does not start with {}",
                i.id,
                i.document.id_prefix()
            );
            assert!(i.id.len() <= 48, "{} is not short", i.id);
        }
    }

    #[test]
    fn every_field_is_filled() {
        for i in SEED_ITEMS {
            for (name, v) in [
                ("label", i.label),
                ("claim", i.claim),
                ("statistic", i.statistic),
                ("setup", i.setup),
            ] {
                assert!(!v.trim().is_empty(), "{}: {name} is empty", i.id);
            }
            assert!(i.claim.ends_with('.'), "{}: claim is not a sentence", i.id);
        }
    }

    #[test]
    fn every_document_has_items_and_a_title() {
        let titles: HashSet<_> = Document::ALL.iter().map(|d| d.title()).collect();
        assert_eq!(titles.len(), Document::ALL.len());
        for d in Document::ALL {
            assert!(items_of(d).next().is_some(), "{d:?} has no item");
            assert!(!d.short().is_empty());
        }
    }

    #[test]
    fn count_per_document() {
        let count = |d| items_of(d).count();
        assert_eq!(count(Document::Hiops), 28);
        assert_eq!(count(Document::Adms), 22);
        assert_eq!(count(Document::Iozone), 18);
        assert_eq!(count(Document::Slides), 14);
        assert_eq!(SEED_ITEMS.len(), 28 + 22 + 18 + 14);
    }

    #[test]
    fn count_per_kind() {
        let count = |k| SEED_ITEMS.iter().filter(|i| i.kind == k).count();
        let counts: Vec<usize> = Kind::ALL.iter().map(|&k| count(k)).collect();
        // Figure, Table, Claim, Method.
        assert_eq!(counts, [36, 12, 17, 17]);
    }

    #[test]
    fn items_are_grouped_by_document_in_table_order() {
        let order: Vec<Document> = SEED_ITEMS.iter().map(|i| i.document).collect();
        let mut runs = order.clone();
        runs.dedup();
        assert_eq!(runs, Document::ALL, "a document's items are split apart");
    }

    #[test]
    fn an_item_is_found_by_its_id() {
        let i = item("hiops-fig7-512b-gain").expect("the Fig 7 item");
        assert_eq!(i.document, Document::Hiops);
        assert!(i.claim.contains("89%"));
        assert!(item("no-such-item").is_none());
    }
}
