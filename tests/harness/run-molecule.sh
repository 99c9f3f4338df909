#!/bin/sh
# Run every Molecule scenario of every role (full default sequence, idempotence
# included), or those of the roles named as arguments. Stops at the first failure.
set -eu
cd "$(dirname "$0")/../.."
# Two checkouts on one machine (worktrees, a CI clone) must not share containers or
# Molecule's state: Molecule keys its state directory by the role directory's name only.
# Instance names (rf-${RDMA_FABRIC_ROLE}-<scenario>-<platform>) and the state directory
# carry a short hash of this checkout's path.
checkout=$(pwd | sha256sum | cut -c1-6)
state_root=${XDG_CACHE_HOME:-$HOME/.cache}/molecule/rdma-fabric-$checkout
roles_dir=collections/ansible_collections/rdma/fabric/roles
roles=${*:-$(ls "$roles_dir")}
ran=0
for role in $roles; do
    [ -d "$roles_dir/$role/molecule" ] || continue
    for scenario_dir in "$roles_dir/$role"/molecule/*/; do
        scenario=$(basename "$scenario_dir")
        [ -f "$scenario_dir/molecule.yml" ] || continue
        echo "=== molecule test: $role/$scenario"
        start=$(date +%s)
        (cd "$roles_dir/$role" \
            && RDMA_FABRIC_ROLE=$role-$checkout \
               MOLECULE_EPHEMERAL_DIRECTORY=$state_root/$role/$scenario \
               molecule test --scenario-name "$scenario")
        took=$(( $(date +%s) - start ))
        echo "=== $role/$scenario passed in $took s"
        tests/harness/phase.sh add "molecule:$role/$scenario" "$took" 0
        ran=$((ran + 1))
    done
done
if [ "$ran" -eq 0 ]; then
    echo "run-molecule: no scenarios found for: $roles" >&2
    exit 1
fi
echo "run-molecule: $ran scenario(s) passed"
