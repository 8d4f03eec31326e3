#include <max_rss/engine/process_table.hpp>

namespace max_rss {

uint32_t ProcessTable::add_process(Process p, uint32_t parent_index, SampledProcess sampled) {
    const pid_t pid = p.pid;
    processes_.push_back(std::move(p));
    parents_.push_back(parent_index);
    const auto index = static_cast<uint32_t>(processes_.size() - 1);
    sampled.index = index;
    sampled.family = kNoFamily;
    live_.assign(pid, LiveProcess{.sampled = sampled, .reader_tid = pid});
    return index;
}

void ProcessTable::add_task(pid_t tid, uint32_t index, bool awaiting_first_stop) {
    tasks_.assign(tid, TaskEntry{index, awaiting_first_stop, false});
    processes_[index].threads++;
    if (LiveProcess* live = live_.find(processes_[index].pid)) live->live_tasks++;
}

TaskEntry* ProcessTable::task(pid_t tid) { return tasks_.find(tid); }

LiveProcess* ProcessTable::live(pid_t pid) { return live_.find(pid); }

std::optional<uint32_t> ProcessTable::live_index(pid_t pid) const {
    const LiveProcess* live = live_.find(pid);
    if (!live) return std::nullopt;
    return live->sampled.index;
}

void ProcessTable::remove_live(pid_t pid) {
    set_family(pid, kNoFamily);
    live_.erase(pid);
}

void ProcessTable::set_family(pid_t pid, uint32_t family) {
    LiveProcess* p = live(pid);
    if (!p || p->sampled.family == family) return;
    if (const uint32_t old = p->sampled.family; old != kNoFamily) {
        auto it = family_sizes_.find(old);
        if (it != family_sizes_.end() && --it->second == 0) family_sizes_.erase(it);
    }
    p->sampled.family = family;
    if (family != kNoFamily) family_sizes_[family]++;
}

uint32_t ProcessTable::family_size(uint32_t family) const {
    auto it = family_sizes_.find(family);
    return it == family_sizes_.end() ? 0 : it->second;
}

pid_t ProcessTable::other_task(uint32_t index, pid_t tid) const {
    for (const auto& [t, entry] : tasks_)
        if (entry.process == index && t != tid && !entry.exiting) return t;
    return 0;
}

void ProcessTable::retid_task(pid_t former_tid, pid_t tid) {
    const TaskEntry* former = tasks_.find(former_tid);
    if (!former) return;
    TaskEntry entry = *former;
    tasks_.erase(former_tid);
    entry.awaiting_first_stop = false;
    entry.exiting = false;
    tasks_.assign(tid, entry);
}

}  // namespace max_rss
